import type { Config } from '../config/schema.js';
import type { ErrorRow, GuestRow, SampleRow, TaskRow } from '../db/schema.js';
import type { EventFold } from '../report/event-log.js';
import type { PcapAnalysis } from './network-analysis.js';
import type { FileTypeDetector } from '../storage/filetype.js';
import type { AnalysisPaths } from '../storage/layout.js';
import type { Report } from '../report/report-types.js';
import type { SupervisorRecord } from '../report/supervisor-log.js';
import type { YaraScanner } from './yara.js';

/** Long-lived helpers a processing run lends its modules; none of them holds results between tasks. */
export interface ProcessingTools {
  fileType: FileTypeDetector;
  yara: YaraScanner;
}

export interface ArchiveOrigin {
  /** The name it was submitted under. */
  name: string;
  /** The analysed file's path inside it. */
  member: string;
  sample: SampleRow | undefined;
  /** Its stored binary; undefined when gone. */
  binaryPath: string | undefined;
}

/** Everything a processing module may read: the task's rows and its raw results on disk. */
export interface ProcessingInput {
  task: TaskRow;
  sample: SampleRow | undefined;
  guest: GuestRow | undefined;
  errors: readonly ErrorRow[];
  paths: AnalysisPaths;
  config: Config;
  /** The analysed file (file and archive tasks): the analysis folder's copy, else storage/binaries/<sha256>; undefined when gone, and for URLs. */
  binaryPath: string | undefined;
  tools: ProcessingTools;
  /** Archive tasks: the submitted archive the file was unpacked from. */
  archive?: ArchiveOrigin;
  /**
   * dump.pcap analysed once for every module that needs it (network, behaviour): undefined without a
   * capture; rejects when the capture cannot be read.
   */
  capture(): Promise<PcapAnalysis | undefined>;
  /** logs/supervisor.jsonl read once for every part that needs it (the log's fold, behaviour, debug). */
  supervisorRecord(): Promise<SupervisorRecord>;
}

/** The report sections processing fills (`signatures` comes later, from the signature engine). */
export type SectionKey =
  | 'info'
  | 'target'
  | 'static'
  | 'strings'
  | 'yara'
  | 'behavior'
  | 'network'
  | 'dropped'
  | 'screenshots'
  | 'procmemory'
  | 'debug'
  | 'metadata';

/**
 * One processing module: a pure function of the task's raw results giving one report section, or
 * undefined when there is nothing to report (the key is then left out of report.json, as Cuckoo does).
 *
 * A module that reads the behaviour log does not open it: it gives a fold (`foldLog`), which the pipeline
 * feeds in its single pass over the log together with every other module's fold and the signatures.
 * `run` then gets the fold's result, or undefined when the task has no log.
 */
export interface ProcessingModule<K extends SectionKey = SectionKey, Folded = unknown> {
  key: K;
  foldLog?(input: ProcessingInput): EventFold<Folded>;
  run(input: ProcessingInput, folded?: Folded): Promise<NonNullable<Report[K]> | undefined>;
}

/** Any module of the registry, whatever its key. */
export type AnyProcessingModule = { [K in SectionKey]: ProcessingModule<K> }[SectionKey];
