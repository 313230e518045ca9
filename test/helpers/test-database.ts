import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { type DatabaseHandle, openDatabase } from '../../src/db/connect.js';
import { createStores, type Stores } from '../../src/db/index.js';
import { startTestPostgres, type TestPostgres } from './postgres.js';

export type DatabaseKind = 'sqlite' | 'postgres';

/** A database of one kind, opened (migrated) before the suite's tests and removed after them. */
export interface TestDatabase {
  handle: DatabaseHandle;
  stores: Stores;
  /** What opened it: the PostgreSQL URL ('' for SQLite) and the home its SQLite file lives in. */
  url: string;
  home: string;
}

/** Call inside a describe(): its before/after hooks fill in and remove the database. */
export function useTestDatabase(kind: DatabaseKind, prefix: string): TestDatabase {
  const database = {} as TestDatabase;
  let pg: TestPostgres | undefined;
  before(async () => {
    database.home = mkdtempSync(join(tmpdir(), prefix));
    if (kind === 'postgres') pg = startTestPostgres();
    database.url = pg?.url ?? '';
    database.handle = await openDatabase(database.url, database.home);
    database.stores = createStores(database.handle.db);
  });
  after(async () => {
    await database.handle?.close();
    pg?.stop();
    if (database.home) rmSync(database.home, { recursive: true, force: true });
  });
  return database;
}
