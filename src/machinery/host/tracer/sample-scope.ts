import type { BehaviorEvent } from '../../../report/events.js';
import type { SampleStart } from '../contracts.js';
import { EventDecoder } from './event-decoder.js';
import type { TraceRecord } from './trace-records.js';

/**
 * Keeps only the sample in the trace, whatever the tracer: recording starts when the sample's first
 * process is executed and covers that process and its descendants. Everything else a tracer may see
 * (nestbox's launcher joining the cgroup, bubblewrap setting the sandbox up, the machine's init, a
 * wrapper's own start) is dropped before it becomes an event.
 *
 * Which process is the sample's first is told by how the sample starts:
 *  - `initPath`: the tracer sees the machine from before its init runs (eBPF, the native monitor). The
 *    init is the process that executes `initPath`; the sample's first process is the init's child, from
 *    its first successful exec (the child's failed execs are the init searching PATH);
 *  - `initPath` null: the tracer starts the sample itself below the init (strace), so the first process
 *    to execute successfully is the sample's;
 *  - `launcherPath` (with `initPath` null): when that first exec runs nestbox's launcher (the qemu
 *    guest's `init --exec`, which hands the sample to its supervisor), the launcher's next exec, in the
 *    same process, is the sample's.
 * Before the sample's first process is known, nothing the sample did can be in the trace, so nothing
 * there can fool the choice.
 *
 * The sample's first process is shown with parent 0: its parent is nestbox's, not part of the analysis.
 */
export class SampleScope {
  /** Thread id -> process id, from identity records (a process's first thread has its pid). */
  private readonly pidOfThread = new Map<number, number>();
  private readonly sample = new Set<number>();
  /** Children the init made before the sample's first process was known: one of them becomes it. */
  private readonly initChildren = new Set<number>();
  /** The last identity of each thread not (yet) of the sample: the sample's first process is introduced with it. */
  private readonly identities = new Map<number, Extract<TraceRecord, { op: 'identity' }>>();
  private init: number | null = null;
  private launcher: number | null = null;
  private first: number | null = null;

  constructor(
    private readonly next: (record: TraceRecord) => void,
    private readonly initPath: string | null,
    private readonly launcherPath: string | null = null,
  ) {}

  /** The sample's first process, once it has been executed. */
  get root(): number | null {
    return this.first;
  }

  record(r: TraceRecord): void {
    const pid = this.pidOf(r);
    if (r.op === 'lost') {
      this.next(r);
    } else if (this.sample.has(pid)) {
      this.pass(r);
    } else if (this.first === null) {
      this.beforeSample(r, pid);
    }
  }

  private pass(r: TraceRecord): void {
    if (r.op === 'identity') {
      this.pidOfThread.set(r.tid, r.pid);
      this.next(r.pid === this.first ? { ...r, ppid: 0 } : r);
      return;
    }
    if (r.op === 'fork') this.sample.add(r.child);
    this.next(r);
  }

  /** Only identities, the init's fork and the exec that starts the sample matter here. */
  private beforeSample(r: TraceRecord, pid: number): void {
    if (r.op === 'identity') {
      this.pidOfThread.set(r.tid, r.pid);
      this.identities.set(r.tid, r);
    }
    if (r.op === 'fork' && pid === this.init) this.initChildren.add(r.child);
    if (r.op !== 'exec' || r.ret < 0) return;
    if (this.initPath === null && this.launcherPath !== null) {
      if (this.launcher === null && r.path === this.launcherPath) this.launcher = pid;
      else if (this.launcher === null || pid === this.launcher) this.startSample(r, pid);
    } else if (this.initPath !== null && this.init === null && r.path === this.initPath) {
      this.init = pid;
    } else if (this.initPath === null || this.initChildren.has(pid)) {
      this.startSample(r, pid);
    }
  }

  private startSample(exec: TraceRecord, pid: number): void {
    this.first = pid;
    this.sample.add(pid);
    this.initChildren.clear();
    const identity = this.identities.get(exec.tid);
    this.identities.clear();
    this.pidOfThread.set(exec.tid, pid);
    // Without its id inside the machine: the log starts with the sample's exec (the first process is known by its host pid).
    this.next({ ts: exec.ts, tid: exec.tid, op: 'identity', pid, ppid: 0, comm: identity?.pid === pid ? identity.comm : '' });
    this.next(exec);
  }

  private pidOf(r: TraceRecord): number {
    if (r.op === 'identity' || r.op === 'counts') return r.pid;
    if (r.op === 'write' && r.pid !== undefined) return r.pid;
    return this.pidOfThread.get(r.tid) ?? r.tid;
  }
}

export interface RecordsDecoder {
  record(record: TraceRecord): void;
  /** The trace has ended: reports the writes no close or exit reported. */
  finish(ts: number): void;
}

/**
 * The records -> events step every tracer ends with: the sample's records only, when the machine said
 * how the sample starts. `belowInit`: the tracer starts the sample itself, under the init. `cwdOf`
 * tells the directory of a process first seen without its parent (after lost records), as it sees it.
 */
export function sampleDecoder(
  emit: (event: BehaviorEvent) => void,
  sample: SampleStart | undefined,
  options: { belowInit: boolean; cwdOf?: (pid: number) => string | null; launcherPath?: string },
): RecordsDecoder {
  if (!sample) return new EventDecoder(emit, options.cwdOf ? { cwdOf: options.cwdOf } : {});
  const decoder = new EventDecoder(emit, { cwdOf: (pid) => (pid === scope.root ? sample.cwd : (options.cwdOf?.(pid) ?? null)) });
  const scope = new SampleScope((record) => decoder.record(record), options.belowInit ? null : sample.initPath, options.launcherPath ?? null);
  return { record: (record) => scope.record(record), finish: (ts) => decoder.finish(ts) };
}
