import { describe, expect, test } from 'bun:test';
import { ROOT, TEST_DB } from './helpers';

describe.skipIf(TEST_DB !== 'sqlite')('single binary', () => {
  test('bun build --compile of the sandbox starts from an empty directory, prints a key that scores, and stops cleanly', async () => {
    const p = Bun.spawn(['bash', 'scripts/smoke-binary.sh'], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' });
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    if (code !== 0) console.error(out, err);
    expect(code).toBe(0);
    expect(out).toContain('binary smoke test passed');
  }, 120_000);
});
