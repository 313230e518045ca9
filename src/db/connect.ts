import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, type SqliteDatabase } from 'kysely';
import pg from 'pg';
import { NestboxError } from '../errors.js';
import { migrationProvider } from './migrations/index.js';
import type { Database } from './schema.js';

export type DatabaseKind = 'sqlite' | 'postgres';

export interface DatabaseHandle {
  db: Kysely<Database>;
  kind: DatabaseKind;
  close(): Promise<void>;
}

/**
 * Opens the database named by `connection` ('' = SQLite at <home>/nestbox.db) and brings its schema up
 * to date.
 */
export async function openDatabase(connection: string, home: string): Promise<DatabaseHandle> {
  const handle = connection.startsWith('postgres://') || connection.startsWith('postgresql://')
    ? openPostgres(connection)
    : openSqlite(sqlitePath(connection, home));
  try {
    await migrate(handle.db);
  } catch (error) {
    await handle.close();
    throw error;
  }
  return handle;
}

function sqlitePath(connection: string, home: string): string {
  if (connection === '') return join(home, 'nestbox.db');
  if (connection.startsWith('sqlite:///')) return connection.slice('sqlite://'.length);
  throw new NestboxError('invalid_config', `database.connection must be empty, sqlite:///path or postgres://...; got ${JSON.stringify(connection)}`);
}

function openSqlite(file: string): DatabaseHandle {
  mkdirSync(dirname(file), { recursive: true });
  const sqlite = new BetterSqlite3(file);
  // WAL lets readers proceed during writes; NORMAL sync is durable across process crashes in WAL mode.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 10000');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  return { db, kind: 'sqlite', close: () => db.destroy() };
}

/** Preparing a statement costs more than running it; the API runs the same few queries over and over. */
function withStatementCache(sqlite: BetterSqlite3.Database): SqliteDatabase {
  const cache = new Map<string, ReturnType<SqliteDatabase['prepare']>>();
  return {
    close: () => sqlite.close(),
    prepare(sql) {
      let statement = cache.get(sql);
      if (!statement) {
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.clear();
        statement = sqlite.prepare(sql);
        cache.set(sql, statement);
      }
      return statement;
    },
  };
}

const STATEMENT_CACHE_SIZE = 500;

function openPostgres(connection: string): DatabaseHandle {
  const pool = new pg.Pool({ connectionString: connection, max: 10 });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, kind: 'postgres', close: () => db.destroy() };
}

async function migrate(db: Kysely<Database>): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName ?? 'unknown';
    throw new NestboxError('internal', `database migration ${failed} failed: ${(error as Error).message}`, { cause: error });
  }
}
