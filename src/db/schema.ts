import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

/**
 * The database schema, one interface per table. Timestamps are ISO-8601 UTC strings and booleans are
 * 0/1 integers so that SQLite and PostgreSQL store them alike; JSON columns hold arrays of strings.
 */

export const TASK_STATUSES = [
  'pending',
  'running',
  'completed',
  'reported',
  'recovered',
  'failed_analysis',
  'failed_processing',
  'failed_reporting',
] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** `archive`: a file unpacked from a submitted archive (create/submit); it runs like a `file` task. */
export type TaskCategory = 'file' | 'url' | 'archive';

/** Categories whose task runs a stored sample file (its `target`). */
export function runsSampleFile(category: TaskCategory): boolean {
  return category === 'file' || category === 'archive';
}

export interface TasksTable {
  id: Generated<number>;
  /** Stored file path (file tasks) or the URL (url tasks). */
  target: string;
  category: TaskCategory;
  /** Seconds; 0 means the configured default. */
  timeout: number;
  priority: number;
  custom: string;
  owner: string;
  /** Machine name asked for; '' when any machine will do. */
  machine: string;
  package: string;
  platform: string;
  /** JSON array of tag names. */
  tags: string;
  /** The options string as submitted ("k=v,k2=v2"). */
  options: string;
  memory: number;
  enforce_timeout: number;
  clock: string;
  added_on: string;
  started_on: string | null;
  completed_on: string | null;
  status: TaskStatus;
  sample_id: number | null;
  submit_id: number | null;
  /** Worker that processed the task, if any. */
  processing: string | null;
  /** Route actually taken by the analysis. */
  route: string | null;
  /** For reboot tasks: the task whose end state this one starts from. */
  reboot_of: number | null;
  /** Archive tasks: the sample row of the submitted archive the file was unpacked from. */
  archive_id: number | null;
  /** Archive tasks: the name the archive was submitted under. */
  archive_name: string | null;
  /** Archive tasks: the file's path inside the archive (through nested archives: `inner.tar/dir/x.sh`). */
  archive_member: string | null;
  /** The report's score (0 to 10) once the task is reported; null before. */
  score: Generated<number | null>;
  /** The node that runs (or ran) the task; null while nobody has claimed it. */
  node: Generated<string | null>;
  /** On a remote node (role `remote`): the task's id there. */
  node_task_id: Generated<number | null>;
  /** When the task was handed to a remote node. */
  delegated_on: Generated<string | null>;
}

export interface SamplesTable {
  id: Generated<number>;
  file_size: number;
  file_type: string;
  md5: string;
  crc32: string;
  sha1: string;
  sha256: string;
  sha512: string;
  ssdeep: string | null;
}

export interface MachinesTable {
  id: Generated<number>;
  name: string;
  label: string;
  kind: string;
  ip: string;
  platform: string;
  /** JSON array of tag names. */
  tags: string;
  /** JSON array of option strings. */
  options: string;
  interface: string | null;
  snapshot: string | null;
  locked: Generated<number>;
  locked_changed_on: string | null;
  status: string | null;
  status_changed_on: string | null;
  resultserver_ip: string;
  resultserver_port: number;
  /** 0 when the machine is no longer in the configuration; kept so old guests still resolve. */
  enabled: number;
  /** The node that runs the machine ('' before the cluster existed). Machine names are unique in the cluster. */
  node: Generated<string>;
}

export const NODE_ROLES = ['all', 'main', 'worker', 'remote'] as const;
/** `remote`: a Cuckoo or nestbox server added through the distributed API, driven over its REST API. */
export type NodeRole = (typeof NODE_ROLES)[number];

/** A node of the cluster (db/migrations/0006-cluster-nodes.ts). */
export interface NodesTable {
  id: Generated<number>;
  name: string;
  role: NodeRole;
  /** Where the node's API answers ('' when it serves none); for a remote node, its REST API. */
  url: Generated<string>;
  /** A remote node's API token; never shown. */
  token: Generated<string | null>;
  version: Generated<string>;
  enabled: Generated<number>;
  /** Cuckoo's distributed node mode, `normal`. */
  mode: Generated<string>;
  /** A remote node's machines, JSON [{name, platform, tags}]; nestbox nodes' machines are in `machines`. */
  machines: Generated<string>;
  /** A remote node's last /cuckoo/status answer (JSON), with when it was read. */
  status: Generated<string | null>;
  started_on: Generated<string | null>;
  heartbeat_on: Generated<string | null>;
  /** Until when the node holds its tasks and machines; renewed by each heartbeat. */
  lease_expires_on: Generated<string | null>;
}

export type GuestStatus = 'init' | 'starting' | 'running' | 'stopping' | 'stopped';

export interface GuestsTable {
  id: Generated<number>;
  task_id: number;
  name: string;
  label: string;
  manager: string;
  status: GuestStatus;
  started_on: string;
  shutdown_on: string | null;
}

export interface ErrorsTable {
  id: Generated<number>;
  task_id: number;
  message: string;
  action: string;
  added_on: string;
}

export interface SubmissionsTable {
  id: Generated<number>;
  tmp_path: string | null;
  added_on: string;
}

/** A reported task as the search index knows it (db/search.ts): one row per indexed task. */
export interface SearchTasksTable {
  task_id: number;
  /** What was analysed, as shown in results: the file's name or the URL (never a host path). */
  target: string;
  /** The report's score when it was indexed. */
  score: number;
  indexed_on: string;
}

/** One searchable value of an indexed task's report; db/search-text.ts says what norm holds. */
export interface SearchEntriesTable {
  id: Generated<number>;
  task_id: number;
  field: string;
  value: string;
  norm: string;
}

/** The words of all values of one field of an indexed task (id: task_id * 32 + the field's position). */
export interface SearchWordsTable {
  id: number;
  task_id: number;
  terms: string;
}

export interface Database {
  tasks: TasksTable;
  samples: SamplesTable;
  machines: MachinesTable;
  guests: GuestsTable;
  errors: ErrorsTable;
  submissions: SubmissionsTable;
  search_tasks: SearchTasksTable;
  search_entries: SearchEntriesTable;
  search_words: SearchWordsTable;
  nodes: NodesTable;
}

export type TaskRow = Selectable<TasksTable>;
export type NewTask = Insertable<TasksTable>;
export type TaskUpdate = Updateable<TasksTable>;
export type SampleRow = Selectable<SamplesTable>;
export type NewSample = Insertable<SamplesTable>;
export type MachineRow = Selectable<MachinesTable>;
export type GuestRow = Selectable<GuestsTable>;
export type ErrorRow = Selectable<ErrorsTable>;
export type NodeRow = Selectable<NodesTable>;
