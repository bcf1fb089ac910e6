import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A fresh directory for a bench's database, removed when the bench exits: a flat-out write run
 * leaves hundreds of MB (repeated runs filled this machine's disk).
 */
export function benchDataDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
