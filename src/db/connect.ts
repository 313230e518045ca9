import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, type SqliteDatabase } from 'kysely';
import pg from 'pg';
import { NestboxError } from '../errors.js';
import { ChangeListener } from './change-listener.js';
import { migrationProvider } from './migrations/index.js';
import type { Database } from './schema.js';

export type DatabaseKind = 'sqlite' | 'postgres';

export interface DatabaseHandle {
  db: Kysely<Database>;
  kind: DatabaseKind;
  /**
   * Changes whenever the stored data may have changed: any write by this process, or by another
   * process on the same SQLite file or PostgreSQL database (see ChangeListener). Undefined while that
   * cannot be known, which turns response caching off.
   */
  changeToken(): string | undefined;
  /** Runs once the schema is up to date. */
  start?(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Opens the database named by `connection` ('' = SQLite at <home>/nestbox.db) and brings its schema up
 * to date.
 */
export async function openDatabase(connection: string, home: string): Promise<DatabaseHandle> {
  const postgres = connection.startsWith('postgres://') || connection.startsWith('postgresql://');
  const handle = postgres ? openPostgres(connection) : openSqlite(sqlitePath(connection, home));
  try {
    await migrate(handle.db);
    await handle.start?.();
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
  const writes = { count: 0 };
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite, writes) }) });
  const dataVersion = sqlite.prepare('PRAGMA data_version').pluck();
  return {
    db,
    kind: 'sqlite',
    changeToken: () => `${writes.count}:${dataVersion.get() as number}`,
    close: () => db.destroy(),
  };
}

/**
 * Preparing a statement costs more than running it, and the API runs the same few queries over and
 * over. Kysely prepares right before it runs, synchronously, so counting prepared statements that are
 * not read-only (INSERT ... RETURNING included) counts writes.
 */
function withStatementCache(sqlite: BetterSqlite3.Database, writes: { count: number }): SqliteDatabase {
  const cache = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sql) {
      let statement = cache.get(sql);
      if (!statement) {
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.clear();
        statement = sqlite.prepare(sql);
        cache.set(sql, statement);
      }
      if (!statement.readonly) writes.count++;
      return statement;
    },
  };
}

const STATEMENT_CACHE_SIZE = 500;

function openPostgres(connection: string): DatabaseHandle & { start(): Promise<void> } {
  const pool = new pg.Pool({ connectionString: connection, max: 10 });
  const changes = new ChangeListener(connection);
  changes.watchWrites(pool);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    kind: 'postgres',
    changeToken: () => changes.token(),
    // The triggers that notify are made by the migrations, so listening starts after them.
    start: () => changes.start(),
    async close() {
      await changes.close();
      await db.destroy();
    },
  };
}

async function migrate(db: Kysely<Database>): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName ?? 'unknown';
    throw new NestboxError('internal', `database migration ${failed} failed: ${(error as Error).message}`, { cause: error });
  }
}
