import { basename, dirname } from 'node:path';
import { streamsBeside } from '../report/behavior-streams.js';
import { WINE_LOADER } from '../report/wine-call-stream.js';
import { windowsSummary } from './windows-summary.js';
import { windowsPathOf } from '../report/windows-paths.js';
import type { BehaviorEvent } from '../report/events.js';
import { apiOf, callOf } from '../report/calls.js';
import { commandLine, windowsCommandLine } from '../report/command-line.js';
import { type EventFold, foldOne } from '../report/event-log.js';
import type { BehaviorSection, Call, GenericEntry, ProcessEntry, ProcessTreeNode } from '../report/report-types.js';
import { type AnsweredCalls, answeredCalls, type SupervisorRecord } from '../report/supervisor-log.js';

/**
 * Rebuilds Cuckoo's behaviour section from the tracer's event log (`logs/events.jsonl`), read line by
 * line: memory stays bounded whatever the log's size, because calls, summary values and processes are
 * kept only up to the limits below while counts (apistats) stay exact. What was cut is said in
 * `anomaly`. Calls and apistats name system calls: apistats are the tracer's own counts of every call of
 * a process when it gave them, otherwise the decoded calls counted, plus the calls the sample supervisor
 * answered itself (which never reached the tracer).
 */

export interface BehaviorLimits {
  /** Calls kept in `processes[].calls`, per process and in all. */
  callsPerProcess: number;
  calls: number;
  /** Values kept per summary category, per process and for the whole analysis. */
  valuesPerProcess: number;
  values: number;
  processes: number;
}

export const DEFAULT_BEHAVIOR_LIMITS: BehaviorLimits = {
  callsPerProcess: 10000,
  calls: 100000,
  valuesPerProcess: 1000,
  values: 10000,
  processes: 10000,
};

/** What the capture says about names and URLs, to attribute them to the processes that used them. */
export interface NetworkHints {
  dns: ReadonlyArray<{ request: string; answers: ReadonlyArray<{ type: string; data: string }> }>;
  dnsServers: readonly string[];
  /** HTTP request URLs by `address|port` of the server. */
  urlsByDestination: ReadonlyMap<string, readonly string[]>;
}

export interface BehaviorOptions {
  /** False drops the calls (task option json.calls=0), keeping everything else. */
  keepCalls?: boolean;
  limits?: BehaviorLimits;
  network?: NetworkHints;
  /** The sample supervisor's record: the calls it answered itself never reached the tracer. */
  supervised?: SupervisorRecord;
}

export interface BehaviorResult {
  section: BehaviorSection;
  eventsLost: number;
  tracer: string | undefined;
}

const O_CREAT = 0o100;
const O_TRUNC = 0o1000;
const O_ACCMODE = 3;
const O_WRONLY = 1;
const O_DIRECTORY = 0o200000;
const EINPROGRESS = -115;

const PTRACE_REQUESTS: Record<number, string> = {
  0: 'PTRACE_TRACEME',
  1: 'PTRACE_PEEKTEXT',
  2: 'PTRACE_PEEKDATA',
  4: 'PTRACE_POKETEXT',
  5: 'PTRACE_POKEDATA',
  16: 'PTRACE_ATTACH',
  17: 'PTRACE_DETACH',
  0x4206: 'PTRACE_SEIZE',
};

/** The tracer's own notes in the log: its name and how many events it had to drop. */
export class TracerNotes implements EventFold<{ lost: number; reports: number; name: string | undefined }> {
  lost = 0;
  reports = 0;
  name: string | undefined;

  event(event: BehaviorEvent): void {
    if (event.kind === 'tracer.lost') {
      this.lost += Number(event.count) || 0;
      this.reports++;
    } else if (event.kind === 'tracer.info' && typeof event.tracer === 'string') {
      this.name ??= event.tracer;
    }
  }

  result() {
    return { lost: this.lost, reports: this.reports, name: this.name };
  }
}

/** Category -> values, insertion-ordered and capped. */
class Summary {
  readonly values = new Map<string, Set<string>>();
  omitted = 0;

  constructor(private readonly cap: number) {}

  add(category: string, value: string): void {
    let set = this.values.get(category);
    if (!set) {
      set = new Set();
      this.values.set(category, set);
    }
    if (set.has(value)) return;
    if (set.size >= this.cap) this.omitted++;
    else set.add(value);
  }

  toJson(): Record<string, string[]> {
    return Object.fromEntries([...this.values].map(([category, set]) => [category, [...set]]));
  }
}

interface ProcessState {
  pid: number;
  ppid: number;
  name: string;
  path: string;
  commandLine: string;
  /** The arguments of the program it runs (a Wine process's name its Windows program). */
  argv: readonly string[];
  firstSeen: number;
  calls: Call[];
  summary: Summary;
  /** Decoded calls by system call name. */
  decoded: Map<string, number>;
  /** Windows calls by name (Wine traced them; the tracer's counts are of system calls only). */
  windows: Map<string, number>;
  /** The tracer's counts of every call, when it counted them. */
  counted: Map<string, number> | undefined;
  /** `address|port` this process connected or sent to. */
  destinations: Set<string>;
  /** What a Windows guest's monitor said of it: the modules loaded at its start, and whether it followed it. */
  modules: ProcessEntry['modules'];
  track: boolean;
}

/**
 * A host process that runs Wine's loader for a Windows program is that program: named after it, with its
 * Windows path and command line (`wine64 C:\x\a.exe arg` runs `C:\x\a.exe arg`). `comm` names it when
 * the loader's arguments name no Windows path (a thread's name may be Wine's own, `wine_threadpool`).
 */
function becomeWindowsProgram(process: ProcessState, comm: string): void {
  const [, program, ...args] = process.argv;
  if (program === undefined || !/^[A-Za-z]:\\/.test(program)) {
    if (comm !== '' && !comm.startsWith('wine_')) process.name = comm;
    return;
  }
  process.name = program.slice(program.lastIndexOf('\\') + 1);
  process.path = program;
  process.commandLine = windowsCommandLine([program, ...args]);
}

/**
 * A process as a Windows guest's monitor describes it when it begins to watch it: the guest's own ids, its
 * program, command line, start and modules, as Cuckoo's report shows them.
 */
function becomeGuestProcess(process: ProcessState, event: Extract<BehaviorEvent, { kind: 'win.process' }>): void {
  process.ppid = event.ppid;
  process.name = event.comm;
  process.path = event.path;
  process.commandLine = event.command_line;
  process.firstSeen = Math.min(process.firstSeen, event.ts);
  process.modules = event.modules;
  process.track = event.track;
}

/** The behaviour fold: what the log says about each process, kept within the limits. */
class Reconstructor {
  readonly processes = new Map<number, ProcessState>();
  readonly summary: Summary;
  readonly anomalies: BehaviorSection['anomaly'] = [];
  readonly tracer = new TracerNotes();
  keptCalls = 0;
  droppedCalls = 0;
  untrackedEvents = 0;
  malformedLines = 0;
  omittedAnomalies = 0;

  constructor(
    private readonly limits: BehaviorLimits,
    private readonly keepCalls: boolean,
  ) {
    this.summary = new Summary(limits.values);
  }

  malformed(): void {
    this.malformedLines++;
  }

  event(event: BehaviorEvent): void {
    // The tracer's own notes belong to no process of the sample.
    if (event.kind.startsWith('tracer.')) {
      this.tracer.event(event);
      return;
    }
    if (event.kind === 'win.anomaly') {
      this.#guestAnomaly(event);
      return;
    }
    const process = this.processOf(event);
    if (!process) {
      this.untrackedEvents++;
      return;
    }
    if (event.kind === 'process.counts') {
      countCalls(process, event.counts);
      return;
    }
    this.apply(process, event);
    // A file under the Wine prefix's C: drive is listed as the Windows program named it, in both views.
    for (const [category, value] of categorise(event)) this.mark(process, category, windowsPathOf(String(value)) ?? String(value));
    // An event of a kind this version does not know is no call it can name.
    const api = apiOf(event);
    if (api === undefined) return;
    const counts = event.kind === 'win.call' ? process.windows : process.decoded;
    counts.set(api, (counts.get(api) ?? 0) + 1);
    this.record(process, event);
  }

  /** Whether the log held anything to report. */
  get empty(): boolean {
    return this.processes.size === 0 && this.malformedLines === 0 && this.tracer.lost === 0 && this.anomalies.length === 0;
  }

  /** What a Windows guest's monitor reported, or processing found wrong in its log: anomalies, as Cuckoo lists them. */
  #guestAnomaly(event: Extract<BehaviorEvent, { kind: 'win.anomaly' }>): void {
    if (this.anomalies.length >= this.limits.values) {
      this.omittedAnomalies++;
      return;
    }
    this.anomalies.push({ category: event.category, funcname: event.funcname, message: event.message });
  }

  private processOf(event: BehaviorEvent): ProcessState | undefined {
    const known = this.processes.get(event.pid);
    if (known) return known;
    return this.track(event.pid, event.ppid, event.comm ?? '', event.ts, '', '');
  }

  private track(pid: number, ppid: number, name: string, firstSeen: number, path: string, commandLine: string) {
    if (this.processes.size >= this.limits.processes) return undefined;
    const state: ProcessState = {
      pid,
      ppid,
      name,
      path,
      commandLine,
      argv: [],
      firstSeen,
      calls: [],
      summary: new Summary(this.limits.valuesPerProcess),
      decoded: new Map(),
      windows: new Map(),
      counted: undefined,
      destinations: new Set(),
      modules: [],
      track: true,
    };
    this.processes.set(pid, state);
    return state;
  }

  /** Effects of an event on the process table. */
  private apply(process: ProcessState, event: BehaviorEvent): void {
    if (event.kind === 'win.process') {
      becomeGuestProcess(process, event);
      if (process.commandLine !== '') this.mark(process, 'command_line', process.commandLine);
    } else if (event.kind === 'process.fork' && !this.processes.has(event.child)) {
      this.track(event.child, process.pid, process.name, event.ts, process.path, process.commandLine);
    } else if (event.kind === 'process.exec' && event.ret >= 0) {
      process.path = String(event.path);
      process.name = basename(process.path) || process.name;
      process.commandLine = commandLine(event.argv);
      process.argv = event.argv;
    } else if ((event.kind === 'win.call' || event.kind === 'process.rename') && WINE_LOADER.test(process.name)) {
      // Wine names the process after its program (prctl), even one that makes no traced Windows call.
      becomeWindowsProgram(process, event.kind === 'process.rename' ? event.name : event.comm);
      // Its Windows command line, as Cuckoo lists the command lines of the processes that ran.
      if (process.path !== '' && /^[A-Za-z]:\\/.test(process.path)) this.mark(process, 'command_line', process.commandLine);
    } else if ((event.kind === 'net.connect' || event.kind === 'net.send' || event.kind === 'net.recv') && isInet(event.family ?? '') && event.address) {
      process.destinations.add(`${event.address}|${event.port}`);
    }
  }

  mark(process: ProcessState, category: string, value: string): void {
    process.summary.add(category, value);
    this.summary.add(category, value);
  }

  private record(process: ProcessState, event: BehaviorEvent): void {
    if (!this.keepCalls) return;
    if (process.calls.length >= this.limits.callsPerProcess || this.keptCalls >= this.limits.calls) {
      this.droppedCalls++;
      return;
    }
    process.calls.push(callOf(event));
    this.keptCalls++;
  }

  /** Names and URLs from the capture, given to the processes whose traffic they belong to. */
  attributeNetwork(hints: NetworkHints): void {
    const namesByAddress = new Map<string, string[]>();
    for (const query of hints.dns) {
      this.summary.add('resolves_host', query.request);
      for (const answer of query.answers) {
        if (answer.type !== 'A' && answer.type !== 'AAAA') continue;
        namesByAddress.set(answer.data, [...(namesByAddress.get(answer.data) ?? []), query.request]);
      }
    }
    const dnsServers = new Set(hints.dnsServers);
    for (const process of this.processes.values()) {
      for (const destination of process.destinations) {
        const [address, port] = destination.split('|') as [string, string];
        for (const name of namesByAddress.get(address) ?? []) this.mark(process, 'connects_host', name);
        for (const url of hints.urlsByDestination.get(destination) ?? []) this.mark(process, 'fetches_url', url);
        if (port === '53' && dnsServers.has(address)) {
          for (const query of hints.dns) process.summary.add('resolves_host', query.request);
        }
      }
    }
  }

  section(answered: AnsweredCalls = { recorded: new Map(), counted: new Map() }): BehaviorResult {
    const processes = [...this.processes.values()];
    const section: BehaviorSection = {
      processes: processes.map(processEntry),
      processtree: processTree(processes),
      generic: processes.map(genericEntry),
      summary: this.summary.toJson(),
      anomaly: [...this.anomalies, ...this.limitAnomalies(processes)],
      apistats: Object.fromEntries(processes.map((process) => [String(process.pid), apistatsOf(process, answered)])),
    };
    return { section, eventsLost: this.tracer.lost, tracer: this.tracer.name };
  }

  private limitAnomalies(processes: ProcessState[]): BehaviorSection['anomaly'] {
    const anomalies: BehaviorSection['anomaly'] = [];
    const note = (category: string, funcname: string, message: string) => anomalies.push({ category, funcname, message });
    if (this.tracer.lost > 0 || this.tracer.reports > 0) note('tracer', 'tracer.lost', `the tracer lost ${this.tracer.lost} events`);
    if (this.malformedLines > 0) note('log', 'events.jsonl', `${this.malformedLines} lines of the event log could not be read`);
    if (this.untrackedEvents > 0) {
      note('truncated', 'processes', `${this.untrackedEvents} events of processes beyond the first ${this.limits.processes} are not listed`);
    }
    if (this.droppedCalls > 0) note('truncated', 'calls', `${this.droppedCalls} calls are not listed (counted in apistats)`);
    const omitted = this.summary.omitted + processes.reduce((sum, process) => sum + process.summary.omitted, 0);
    if (omitted > 0) note('truncated', 'summary', `${omitted} summary values are not listed`);
    if (this.omittedAnomalies > 0) note('truncated', 'anomaly', `${this.omittedAnomalies} anomalies of the behaviour logs are not listed`);
    return anomalies;
  }
}

/**
 * A process's calls by name: the tracer's counts (or, without them, its decoded calls, among which
 * processing put the calls the supervisor recorded), the calls the tracer never saw because the
 * supervisor answered them, and a Wine process's Windows calls.
 */
function apistatsOf(process: ProcessState, answered: AnsweredCalls): Record<string, number> {
  const stats = new Map(process.counted ?? process.decoded);
  const add = (counts: ReadonlyMap<string, number> | undefined) => {
    for (const [call, count] of counts ?? []) stats.set(call, (stats.get(call) ?? 0) + count);
  };
  if (process.counted) add(answered.recorded.get(process.pid));
  add(answered.counted.get(process.pid));
  add(process.windows);
  return Object.fromEntries(stats);
}

/** The summary categories an event belongs to, with their values. */
function categorise(event: BehaviorEvent): Array<[string, string]> {
  switch (event.kind) {
    case 'process.exec':
      return event.ret >= 0 ? [['command_line', commandLine(event.argv)]] : [];
    case 'process.rename':
      return [['process_renamed', event.name]];
    case 'process.ptrace': {
      const request = PTRACE_REQUESTS[event.request] ?? `request ${event.request}`;
      return [['ptrace', event.request === 0 ? request : `${request} ${event.target}`]];
    }
    case 'process.setid':
      return event.ret >= 0 ? [['privilege_change', `${event.call}(${(event.ids ?? []).join(', ')})`]] : [];
    case 'file.open':
      return categoriseOpen(event);
    case 'file.write':
      return [['file_written', event.path]];
    case 'file.rename':
      return event.ret >= 0 ? [['file_moved', `${event.from} -> ${event.to}`]] : [['file_failed', event.from]];
    case 'file.delete':
      return event.ret >= 0 ? [['file_deleted', event.path]] : [];
    case 'file.mkdir':
      return event.ret >= 0 ? [['directory_created', event.path]] : [];
    case 'file.rmdir':
      return event.ret >= 0 ? [['directory_removed', event.path]] : [];
    case 'file.chmod':
    case 'file.chown':
      return event.ret >= 0 ? [['file_permission_changed', event.path]] : [];
    case 'file.link':
      return event.ret >= 0 ? [['file_created', event.to]] : [];
    case 'net.connect':
      return isInet(event.family) && (event.ret >= 0 || event.ret === EINPROGRESS) ? [['connects_ip', event.address]] : [];
    case 'net.send':
      return isInet(event.family ?? '') && event.address ? [['connects_ip', event.address]] : [];
    case 'memory.memfd':
      return [['memfd_created', event.name]];
    case 'memory.exec_map':
      return [['executable_mapping', event.path ?? `anonymous ${event.call} ${event.address}`]];
    case 'module.load':
      return event.ret >= 0 ? [['module_loaded', event.path ?? event.call]] : [];
    case 'win.call':
      return windowsSummary(event);
    default:
      return [];
  }
}

function categoriseOpen(event: Extract<BehaviorEvent, { kind: 'file.open' }>): Array<[string, string]> {
  if (event.ret < 0) return [['file_failed', event.path]];
  if (event.flags & O_DIRECTORY) return [['directory_enumerated', event.path]];
  const found: Array<[string, string]> = [['file_opened', event.path]];
  if (event.flags & O_CREAT) found.push(['file_created', event.path]);
  else if (event.flags & O_TRUNC) found.push(['file_recreated', event.path]);
  // Opening for reading is as close to Cuckoo's file_read as a system-call trace without reads gets.
  if ((event.flags & O_ACCMODE) !== O_WRONLY) found.push(['file_read', event.path]);
  return found;
}

function isInet(family: string): boolean {
  return family === 'inet' || family === 'inet6';
}

/** The tracer's totals since the process was first traced: a later report of a call replaces an earlier one. */
function countCalls(process: ProcessState, counts: unknown): void {
  if (typeof counts !== 'object' || counts === null) return;
  process.counted ??= new Map();
  for (const [name, count] of Object.entries(counts)) {
    // A process sends its counts at each exec and at its exit: they add up.
    if (Number.isSafeInteger(count) && (count as number) >= 0) process.counted.set(name, (process.counted.get(name) ?? 0) + (count as number));
  }
}

function processEntry(process: ProcessState): ProcessEntry {
  return {
    type: 'process',
    pid: process.pid,
    ppid: process.ppid,
    process_name: process.name,
    process_path: process.path,
    command_line: process.commandLine,
    first_seen: process.firstSeen,
    track: process.track,
    modules: process.modules,
    calls: process.calls,
  };
}

function genericEntry(process: ProcessState): GenericEntry {
  return {
    pid: process.pid,
    ppid: process.ppid,
    process_name: process.name,
    process_path: process.path,
    first_seen: process.firstSeen,
    summary: process.summary.toJson(),
  };
}

function processTree(processes: ProcessState[]): ProcessTreeNode[] {
  const nodes = new Map<number, ProcessTreeNode>();
  for (const process of processes) {
    nodes.set(process.pid, {
      pid: process.pid,
      ppid: process.ppid,
      process_name: process.name,
      command_line: process.commandLine,
      first_seen: process.firstSeen,
      track: process.track,
      children: [],
    });
  }
  const roots: ProcessTreeNode[] = [];
  // A node joins only a parent already placed, so even a log with looping ppids gives a tree.
  const placed = new Set<number>();
  for (const node of [...nodes.values()].sort((a, b) => a.first_seen - b.first_seen)) {
    const parent = placed.has(node.ppid) ? nodes.get(node.ppid) : undefined;
    if (parent) parent.children.push(node);
    else roots.push(node);
    placed.add(node.pid);
  }
  return roots;
}

/** The behaviour section, given what the capture and the supervisor add to the log. */
export type FinishBehavior = (network?: NetworkHints, answered?: AnsweredCalls) => BehaviorResult | undefined;

/**
 * The behaviour fold, for the pipeline's one pass over the log. Its result gives the section once the
 * capture's names and the supervisor's answered calls are known (undefined when the log holds no event).
 */
export function behaviorFold(options: Omit<BehaviorOptions, 'network' | 'supervised'> = {}): EventFold<FinishBehavior> {
  const reconstructor = new Reconstructor(options.limits ?? DEFAULT_BEHAVIOR_LIMITS, options.keepCalls ?? true);
  return {
    event: (event) => reconstructor.event(event),
    malformed: () => reconstructor.malformed(),
    result: () => (network, answered) => {
      if (reconstructor.empty) return undefined;
      if (network) reconstructor.attributeNetwork(network);
      return reconstructor.section(answered);
    },
  };
}

/** The behaviour section of an event log read on its own; undefined when there is no log or it holds no event. */
export async function reconstructBehavior(eventsPath: string, options: BehaviorOptions = {}): Promise<BehaviorResult | undefined> {
  const supervised = options.supervised ?? { sleeps: [], unrecorded: [] };
  // A task folder's log (<task>/logs/events.jsonl) may have Wine's calls, or a Windows guest's logs, beside it.
  const taskDir = basename(dirname(eventsPath)) === 'logs' ? dirname(dirname(eventsPath)) : undefined;
  const among = await streamsBeside(taskDir, supervised.sleeps);
  const finish = await foldOne(eventsPath, behaviorFold(options), among);
  return finish?.(options.network, answeredCalls(supervised));
}
