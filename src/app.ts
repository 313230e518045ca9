import { pino, type Logger } from 'pino';
import type { Config } from './config/schema.js';
import { openDatabase, type DatabaseKind } from './db/connect.js';
import { createStores, type Stores } from './db/index.js';
import { type NodeScope, nodeScope } from './db/node-scope.js';
import { NestboxError } from './errors.js';
import { FileTypeDetector } from './storage/filetype.js';
import { StorageLayout } from './storage/layout.js';

/** Everything a running nestbox shares: configuration, data layer, storage and helpers. */
export interface AppContext {
  config: Config;
  home: string;
  layout: StorageLayout;
  stores: Stores;
  databaseKind: DatabaseKind;
  /** This node: its name in the cluster, and which rows of tasks and machines are its own. */
  node: NodeScope;
  /** See DatabaseHandle.changeToken: changes whenever stored data may have changed. */
  dataChangeToken(): string | undefined;
  fileType: FileTypeDetector;
  log: Logger;
  close(): Promise<void>;
}

export interface CreateContextOptions {
  config: Config;
  home: string;
  log?: Logger;
}

export async function createContext({ config, home, log }: CreateContextOptions): Promise<AppContext> {
  const logger = log ?? pino({ level: config.logging.level });
  const layout = new StorageLayout(config.paths.storage, config.paths.tmppath);
  layout.ensure();
  const database = await openDatabase(config.database.connection, home);
  const stores = createStores(database.db);
  const node = nodeScope(config.cluster, database.kind);
  try {
    refuseClusterOnSqlite(config, database.kind);
    // A main node runs no machines: the ones it configured before are disabled.
    await stores.machines.syncFromConfig(config.cluster.role === 'main' ? [] : config.machines, node);
  } catch (error) {
    await database.close();
    throw error;
  }
  const fileType = new FileTypeDetector();
  return {
    config,
    home,
    layout,
    stores,
    databaseKind: database.kind,
    node,
    dataChangeToken: () => database.changeToken(),
    fileType,
    log: logger,
    async close() {
      fileType.close();
      await database.close();
    },
  };
}

/** Nodes of several hosts share one database, and only PostgreSQL is shared over the network. */
function refuseClusterOnSqlite(config: Config, kind: DatabaseKind): void {
  if (kind === 'sqlite' && config.cluster.role !== 'all') {
    throw new NestboxError(
      'invalid_config',
      `cluster role "${config.cluster.role}" needs a PostgreSQL database shared by the nodes (database.connection: postgres://...); SQLite serves one host only (role all)`,
    );
  }
}
