import type { Migration, MigrationProvider } from 'kysely';
import * as initial from './0001-initial.js';
import * as changeNotify from './0002-change-notify.js';
import * as archiveProvenance from './0003-archive-provenance.js';
import * as taskScore from './0004-task-score.js';
import * as searchIndex from './0005-search-index.js';
import * as clusterNodes from './0006-cluster-nodes.js';
import * as taskClaims from './0007-task-claims.js';
import * as windowsUnderWine from './0008-windows-under-wine.js';

/** Versioned migrations, applied in name order. Add new ones at the end; never edit a released one. */
const migrations: Record<string, Migration> = {
  '0001-initial': initial,
  '0002-change-notify': changeNotify,
  '0003-archive-provenance': archiveProvenance,
  '0004-task-score': taskScore,
  '0005-search-index': searchIndex,
  '0006-cluster-nodes': clusterNodes,
  '0007-task-claims': taskClaims,
  '0008-windows-under-wine': windowsUnderWine,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
