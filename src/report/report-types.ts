/**
 * The shape of report.json: Cuckoo 2.0's structure (cuckoo-compat.md §6), which clients parse, filled from
 * nestbox's Linux results. Processing modules produce the sections, signatures read them, reporting
 * writes them. Keys whose module produced nothing are left out, as Cuckoo does (except `signatures`).
 */

export interface FileInfo {
  name: string;
  path: string | null;
  size: number;
  crc32: string;
  md5: string;
  sha1: string;
  sha256: string;
  sha512: string;
  ssdeep: string | null;
  type: string;
  yara: YaraMatch[];
  urls: string[];
}

export interface YaraMatch {
  name: string;
  meta: Record<string, string>;
  strings: string[];
}

export interface InfoSection {
  id: number;
  version: string;
  category: 'file' | 'url' | 'archive';
  package: string;
  platform: string;
  custom: string;
  owner: string;
  /** Normalised options string, "k=v,k2=v2". */
  options: string;
  route: string | null;
  /** Epoch seconds. */
  added: number;
  started: number | null;
  ended: number | null;
  duration: number;
  machine: Record<string, unknown>;
  /** 0 to 10, from the matched signatures. */
  score: number;
  /** Behaviour events the tracer had to drop (0 when none). */
  events_lost?: number;
  tracer?: string;
}

/**
 * What was analysed. A file unpacked from a submitted archive is shown as Cuckoo 2.0.7 shows it:
 * category `archive`, `file` the unpacked file, `filename` its path inside the archive, `archive` the
 * archive's own facts and `human` both in one line (`dir/x.sh @ bundle.zip`).
 */
export interface TargetSection {
  category: 'file' | 'url' | 'archive';
  file?: FileInfo;
  url?: string;
  filename?: string;
  archive?: FileInfo;
  human?: string;
}

/**
 * One recorded system call, in Cuckoo's call shape (report/calls.ts): `api` is the system call's name (e.g.
 * `openat`), `arguments` its arguments by name, a payload as `buffer` text with unprintable bytes escaped.
 */
/** The categories Cuckoo's Windows monitor gives its calls (Wine tasks use them). */
export type WindowsCallCategory =
  | 'filesystem' | 'registry' | 'process' | 'threading' | 'network' | 'services' | 'synchronisation' | 'system'
  | 'hooking' | 'misc' | 'crypto' | 'ui' | 'device' | 'browser' | 'certificate' | 'resource' | 'com'
  | 'exception' | 'netapi';

export interface Call {
  api: string;
  category: 'process' | 'file' | 'network' | 'memory' | 'synchronisation' | 'system' | WindowsCallCategory;
  time: number;
  tid: number;
  status: boolean;
  return_value: number;
  arguments: Record<string, unknown>;
  /** How many more times the same call was made right after this one (Cuckoo's monitor folds such runs). */
  repeated: number;
}

export interface ProcessEntry {
  type: 'process';
  pid: number;
  ppid: number;
  process_name: string;
  process_path: string;
  command_line: string;
  first_seen: number;
  track: boolean;
  modules: unknown[];
  calls: Call[];
}

export interface ProcessTreeNode {
  pid: number;
  ppid: number;
  process_name: string;
  command_line: string;
  first_seen: number;
  track: boolean;
  children: ProcessTreeNode[];
}

export interface GenericEntry {
  pid: number;
  ppid: number;
  process_name: string;
  process_path: string;
  first_seen: number;
  summary: Record<string, string[]>;
}

export interface BehaviorSection {
  processes: ProcessEntry[];
  processtree: ProcessTreeNode[];
  generic: GenericEntry[];
  /**
   * Category -> unique values. Categories used: file_opened, file_created, file_recreated, file_read,
   * file_written, file_deleted, file_moved, file_copied, file_exists, file_failed, directory_created,
   * directory_removed, command_line, connects_ip, connects_host, resolves_host, fetches_url,
   * downloads_file, plus Linux ones: file_permission_changed, memfd_created, executable_mapping,
   * module_loaded, ptrace, process_renamed, privilege_change.
   * Also directory_enumerated (folders opened for listing). file_moved values are "<from> -> <to>"
   * (Cuckoo lists [from, to] pairs).
   */
  summary: Record<string, string[]>;
  anomaly: Array<{ category: string; funcname: string; message: string }>;
  apistats: Record<string, Record<string, number>>;
}

export interface NetworkSection {
  mitm: unknown[];
  pcap_sha256?: string;
  hosts: string[];
  domains: Array<{ domain: string; ip: string }>;
  dns: Array<{ request: string; type: string; answers: Array<{ type: string; data: string }> }>;
  tcp: Array<{ src: string; sport: number; dst: string; dport: number; offset: number; time: number }>;
  udp: Array<{ src: string; sport: number; dst: string; dport: number; offset: number; time: number }>;
  icmp: Array<{ src: string; dst: string; type: number; data: string }>;
  http: Array<{
    count: number;
    host: string;
    port: number;
    data: string;
    uri: string;
    body: string;
    path: string;
    'user-agent': string;
    version: string;
    method: string;
  }>;
  /** TLS ClientHello server names. */
  tls: Array<{ dst: string; dport: number; sni: string }>;
  smtp: Array<{ dst: string; raw: string }>;
  irc: Array<{ dst: string; command: string; params: string }>;
  dns_servers: string[];
  dead_hosts: Array<[string, number]>;
}

export interface DroppedFile extends FileInfo {
  /** Original path inside the machine. */
  filepath: string;
  pids: number[];
  /**
   * Only on a file over the `dropped_files` limits, of which the first bytes were kept: `size` and the
   * hashes are then of those bytes (the stored file), `original_size` is the file's size in the machine.
   */
  truncated?: true;
  original_size?: number;
  note?: string;
}

export interface SignatureMark {
  type: 'call' | 'ioc' | 'generic';
  [key: string]: unknown;
}

export interface SignatureMatch {
  name: string;
  description: string;
  severity: number;
  categories: string[];
  families: string[];
  references: string[];
  /** ATT&CK technique ids -> {short, long} or null. */
  ttp: Record<string, { short: string; long: string } | null>;
  markcount: number;
  marks: SignatureMark[];
}

/** A sleep of the sample that the machine ended at once (longer than its threshold): the sample could not outwait the analysis. */
export interface SkippedSleep {
  /** The process (its thread group), whichever of its threads made the call. */
  pid: number;
  /** The system call: a sleep (nanosleep, clock_nanosleep), a timer (alarm, setitimer...) or a wait (select, poll, epoll_wait...). */
  call: string;
  /** How long the sample asked to sleep, or its timer's first expiry, or its wait's timeout. */
  seconds: number;
  /** Unix time of the call. */
  time: number;
}

export interface Report {
  info: InfoSection;
  target: TargetSection;
  static?: Record<string, unknown>;
  strings?: string[];
  behavior?: BehaviorSection;
  network?: NetworkSection;
  dropped?: DroppedFile[];
  screenshots?: Array<{ path: string; ocr: string }>;
  procmemory?: Array<Record<string, unknown>>;
  yara?: YaraMatch[];
  debug?: { log: string[]; cuckoo: string[]; action: string[]; errors: string[]; skipped_sleeps?: SkippedSleep[] };
  metadata?: Record<string, unknown>;
  signatures: SignatureMatch[];
  [section: string]: unknown;
}
