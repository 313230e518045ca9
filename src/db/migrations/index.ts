import type { Migration, MigrationProvider } from 'kysely';
import * as initial from './0001-initial.js';

/** Versioned migrations, applied in name order. Add new ones at the end; never edit a released one. */
const migrations: Record<string, Migration> = {
  '0001-initial': initial,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
