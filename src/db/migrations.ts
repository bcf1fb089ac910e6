import { join } from 'node:path';

/** Folder holding drizzle-kit's committed migrations for a dialect (db/pg, db/sqlite). */
export function migrationsFolder(dialect: 'pg' | 'sqlite'): string {
  return join(import.meta.dir, '..', '..', 'db', dialect);
}
