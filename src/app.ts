import { pino, type Logger } from 'pino';
import type { Config } from './config/schema.js';
import { openDatabase, type DatabaseKind } from './db/connect.js';
import { createStores, type Stores } from './db/index.js';
import { FileTypeDetector } from './storage/filetype.js';
import { StorageLayout } from './storage/layout.js';

/** Everything a running nestbox shares: configuration, data layer, storage and helpers. */
export interface AppContext {
  config: Config;
  home: string;
  layout: StorageLayout;
  stores: Stores;
  databaseKind: DatabaseKind;
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
  await stores.machines.syncFromConfig(config.machines);
  const fileType = new FileTypeDetector();
  return {
    config,
    home,
    layout,
    stores,
    databaseKind: database.kind,
    dataChangeToken: () => database.changeToken(),
    fileType,
    log: logger,
    async close() {
      fileType.close();
      await database.close();
    },
  };
}
