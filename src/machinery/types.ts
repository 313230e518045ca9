import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { MachineRow } from '../db/schema.js';
import type { AnalysisPaths } from '../storage/layout.js';

/**
 * The machinery interface: how the scheduler runs one task on one analysis machine. A machinery kind
 * (linux namespaces, qemu...) is one implementation, registered in `machinery/registry.ts`.
 *
 * The scheduler calls, for each task: start -> run -> stop -> collect, then destroy in every case.
 */

export type Route = 'none' | 'drop' | 'inetsim' | 'internet' | string;

export interface AnalysisRequest {
  taskId: number;
  machine: MachineRow;
  /** The task's analysis folder; raw results are written here. */
  paths: AnalysisPaths;
  category: 'file' | 'url';
  /** File tasks: the sample, with its original file name. */
  samplePath?: string;
  /** URL tasks: the URL. */
  url?: string;
  /** Analysis package asked for, '' to choose from the file type. */
  package: string;
  /** The task's platform, '' (or absent) when it asks for none. */
  platform?: string;
  options: Record<string, string>;
  timeoutSeconds: number;
  /** Run for the whole timeout even when every process of the sample has exited. */
  enforceTimeout: boolean;
  /** Dump the memory of the sample's processes (and the whole machine where the kind can). */
  memory: boolean;
  route: Route;
  /** Guest clock, ISO timestamp. */
  clock: string;
  /** Reboot tasks: the analysis folder whose end state this run starts from. */
  rebootFrom?: AnalysisPaths;
  log: Logger;
}

export interface RunResult {
  /** Route actually used. */
  route: Route;
  /** Why the run ended: every process exited, the timeout passed, or it failed. */
  ended: 'exited' | 'timeout' | 'error';
  /** Problems worth showing in the task's errors, without failing the task. */
  warnings: string[];
}

export interface MachineSession {
  /** Runs the analysis package until the sample is done or the timeout passes. */
  run(signal: AbortSignal): Promise<RunResult>;
  /** Stops everything running in the machine; safe to call more than once. */
  stop(): Promise<void>;
  /** Writes the raw results (behaviour log, pcap, dropped files, screenshots, dumps) into the analysis folder. */
  collect(): Promise<void>;
  /** Releases every resource: processes, mounts, cgroups, namespaces, interfaces. Never throws. */
  destroy(): Promise<void>;
}

export interface Machinery {
  readonly kind: string;
  /** Name shown as the guest's `manager`. */
  readonly manager: string;
  /** Throws a NestboxError saying why this kind cannot run on this host. Called once before first use. */
  prepare(): Promise<void>;
  /** Starts a machine from a clean state for one task. */
  start(request: AnalysisRequest): Promise<MachineSession>;
  /** Removes what runs interrupted by a crash left behind (at service start-up). */
  cleanupStale(): Promise<void>;
  /** Ends what the machinery keeps ready between tasks (a spare network, a waiting tracer), at service stop. */
  close?(): Promise<void>;
}

export type MachineryFactory = (config: Config, log: Logger) => Machinery;
