import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { EMBEDDED_MIGRATIONS } from './migrations.embedded';

/**
 * Folder holding drizzle-kit's migrations for a dialect: db/pg or db/sqlite in a checkout; inside
 * the single binary (no db/ beside it) the embedded copies are written to a temporary folder.
 */
export function migrationsFolder(dialect: 'pg' | 'sqlite'): string {
  const onDisk = join(import.meta.dir, '..', '..', 'db', dialect);
  if (existsSync(join(onDisk, 'meta', '_journal.json'))) return onDisk;
  const files = EMBEDDED_MIGRATIONS[dialect];
  const dir = join(tmpdir(), `pt-api-migrations-${dialect}-${Bun.hash(files.map(([, c]) => c).join('\n')).toString(16)}`);
  mkdirSync(join(dir, 'meta'), { recursive: true });
  for (const [name, content] of files) writeFileSync(join(dir, name), content);
  return dir;
}
