import { readdir, readFile } from 'node:fs/promises';

/**
 * Which host process is which Wine process. wineserver, once its request trace is on, prints a line for
 * each process's first thread and each new thread, with the Unix ids the thread has inside the machine:
 * `0024: init_first_thread( unix_pid=12, unix_tid=12, ...)` and its answer
 * `0024: init_first_thread() = 0 { pid=0020, tid=0024, ...}`; `0030: init_thread( unix_tid=13, ...)`. The
 * machine's ids are turned into host ids (the numbering of the events file) while the thread lives, from
 * the NSpid lines of the processes in the machine's cgroup. The trace comes on with the sample's first
 * process (see wine-run.ts): its request is not in it, only the answer, and that process is the init's
 * child, found by `sampleRoot`.
 */
export interface WineProcessIds {
  winpid: number;
  /** The host pid. */
  pid: number;
  /** Wine tid (decimal) -> host tid. */
  tids: Record<string, number>;
}

/** A Wine process takes far longer than this to start and say who it is. */
const WATCH_MS = 15;

const FIRST_THREAD = /^([0-9a-f]+): init_first_thread\( unix_pid=(\d+), unix_tid=(\d+)/;
const FIRST_THREAD_REPLY = /^([0-9a-f]+): init_first_thread\(\) = 0 \{ pid=([0-9a-f]+), tid=([0-9a-f]+)/;
const NEW_THREAD = /^([0-9a-f]+): init_thread\( unix_tid=(\d+)/;

export class WinePidMap {
  private readonly byWinpid = new Map<number, WineProcessIds>();
  /** Wine tid -> its first thread's machine ids, until the answer names the Wine pid. */
  private readonly pending = new Map<number, { nspid: number; nstid: number }>();
  private rest = '';
  /** Set once the sample is released. */
  private active = false;
  /** Host pids of Wine's own processes (the boot's), never the sample's. */
  private readonly own = new Set<number>();
  /** Host pid -> its pid inside the machine, read once per process (the runs are too short for pids to be reused). */
  private readonly nspids = new Map<number, number | undefined>();
  private watcher: NodeJS.Timeout | undefined;
  /** Lookups in flight, so that the map is complete once they are awaited. */
  private work: Promise<void> = Promise.resolve();

  constructor(
    /** Host pids of every process in the machine's sample cgroup. */
    private readonly machinePids: () => Promise<number[]>,
    /** Host pid of the sample's first process. */
    private readonly sampleRoot: () => Promise<number | undefined>,
  ) {}

  /**
   * The sample starts now: what was mapped so far is Wine's boot, and `ownPids` (host pids) are Wine's own
   * processes, which the map leaves out from here on.
   */
  released(ownPids: number[]): void {
    this.active = true;
    for (const pid of ownPids) this.own.add(pid);
    this.watch();
  }

  /** Feeds wineserver's trace as it arrives; other lines are ignored. */
  feed(chunk: Buffer | string): void {
    const lines = (this.rest + chunk.toString()).split('\n');
    this.rest = lines.pop() ?? '';
    for (const line of lines) this.line(line);
  }

  /** The map once every lookup is done. */
  async result(): Promise<WineProcessIds[]> {
    this.stop();
    await this.work;
    return [...this.byWinpid.values()];
  }

  private line(line: string): void {
    // Wine's boot is not looked up: its processes are not the sample's, and the sample's must be found while they live.
    if (!this.active) return;
    let match = FIRST_THREAD.exec(line);
    if (match) {
      this.pending.set(parseInt(match[1]!, 16), { nspid: Number(match[2]), nstid: Number(match[3]) });
      // At once, not after the lookups queued before: the process is alive now, waiting for the answer.
      void this.lookAround().catch(() => undefined);
      return;
    }
    match = FIRST_THREAD_REPLY.exec(line);
    if (match) {
      const [winpid, wintid] = [parseInt(match[2]!, 16), parseInt(match[3]!, 16)];
      const ids = this.pending.get(parseInt(match[1]!, 16));
      if (ids) this.later(() => this.addProcess(winpid, wintid, ids.nspid, ids.nstid));
      else if (this.byWinpid.size === 0) this.later(() => this.addRoot(winpid, wintid));
      return;
    }
    match = NEW_THREAD.exec(line);
    if (match) {
      const wintid = parseInt(match[1]!, 16);
      const nstid = Number(match[2]);
      this.later(() => this.addThread(wintid, nstid));
    }
  }

  private later(step: () => Promise<void>): void {
    this.work = this.work.then(step).catch(() => undefined);
  }

  /** Wine reuses the ids of ended processes: a process not found (ended already) leaves its Wine pid unmapped. */
  private async addProcess(winpid: number, wintid: number, nspid: number, nstid: number): Promise<void> {
    this.byWinpid.delete(winpid);
    const host = await this.hostIds(nspid, nstid);
    if (!host || this.own.has(host.pid)) return;
    this.byWinpid.set(winpid, { winpid, pid: host.pid, tids: { [wintid]: host.tid } });
  }

  private async addRoot(winpid: number, wintid: number): Promise<void> {
    const pid = await this.sampleRoot();
    if (pid !== undefined && !this.own.has(pid)) this.byWinpid.set(winpid, { winpid, pid, tids: { [wintid]: pid } });
  }

  /** A new thread of a mapped process (threads of Wine's own processes are not looked for). */
  private async addThread(wintid: number, nstid: number): Promise<void> {
    for (const entry of this.byWinpid.values()) {
      const tid = await hostTidOf(entry.pid, nstid);
      if (tid === undefined) continue;
      entry.tids[wintid] = tid;
      return;
    }
  }

  /** The host pid and tid of a thread known by its ids inside the machine. */
  private async hostIds(nspid: number, nstid: number): Promise<{ pid: number; tid: number } | undefined> {
    await this.lookAround();
    for (const [pid, inside] of this.nspids) {
      if (inside === nspid) return { pid, tid: (await hostTidOf(pid, nstid)) ?? pid };
    }
    return undefined;
  }

  /** Notes the machine-side pid of each process in the machine not seen yet. */
  private async lookAround(): Promise<void> {
    for (const pid of await this.machinePids()) {
      if (!this.nspids.has(pid)) this.nspids.set(pid, await innermostId(`/proc/${pid}/status`));
    }
  }

  /**
   * Looks at the machine's processes every WATCH_MS while the sample runs, so that a Wine process that
   * ends before its trace line is read (a copy that finds its mutex taken) is still known.
   */
  watch(): void {
    this.watcher ??= setInterval(() => void this.lookAround().catch(() => undefined), WATCH_MS);
  }

  /** Ends the watch. */
  stop(): void {
    clearInterval(this.watcher);
  }
}

/** The host tid of the thread of host process `pid` whose id inside the machine is `nstid`. */
async function hostTidOf(pid: number, nstid: number): Promise<number | undefined> {
  const tids = await readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
  for (const tid of tids) if ((await innermostId(`/proc/${pid}/task/${tid}/status`)) === nstid) return Number(tid);
  return undefined;
}

/** The last id of a status file's NSpid line: the id in the innermost pid namespace, the machine's. */
async function innermostId(statusFile: string): Promise<number | undefined> {
  const status = await readFile(statusFile, 'utf8').catch(() => '');
  const line = /^NSpid:\s+(.*)$/m.exec(status);
  const ids = line?.[1]!.trim().split(/\s+/);
  return ids ? Number(ids[ids.length - 1]) : undefined;
}
