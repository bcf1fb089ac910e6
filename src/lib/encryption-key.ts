import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomHex } from './crypto';

/**
 * Embedded sandbox convenience: without ENCRYPTION_KEY, a random key is kept in DATA_DIR
 * (file mode 0600) so the single-binary sandbox needs no setup. Production (DATABASE_URL) must set
 * ENCRYPTION_KEY; the service refuses to start without it.
 */
export function loadOrCreateEncryptionKey(dataDir: string): string {
  if (dataDir === ':memory:') return randomHex(32);
  const file = join(dataDir, 'encryption.key');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true });
  const key = randomHex(32);
  writeFileSync(file, key + '\n', { mode: 0o600 });
  return key;
}
