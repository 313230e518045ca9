import { parentPort, workerData } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';

/**
 * The last and longest step of writing a calls index, in a worker thread (report/calls-index.ts starts
 * it): the indexes of a million calls take seconds to sort, which the service's event loop cannot wait.
 * Made once every call is in: building them at the end is several times faster than keeping them up.
 */
const INDEXES = `
  CREATE INDEX calls_by_pid ON calls (pid, id);
  CREATE INDEX calls_by_api ON calls (api, id);
  CREATE INDEX calls_by_category ON calls (category, id);
`;

const db = new BetterSqlite3(workerData as string);
try {
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.exec(INDEXES);
  // A few sampled rows are enough for the planner to choose between the pid, api and category indexes.
  db.exec('PRAGMA analysis_limit = 1000; ANALYZE');
} finally {
  db.close();
}
parentPort?.postMessage('indexed');
