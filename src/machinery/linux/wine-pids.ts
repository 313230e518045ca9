/**
 * Which machine process is which Wine process. wineserver, once its request trace is on, prints a line for
 * each process's first thread and each new thread, with the Unix ids the thread has inside the machine:
 * `0024: init_first_thread( unix_pid=12, unix_tid=12, ...)` and its answer
 * `0024: init_first_thread() = 0 { pid=0020, tid=0024, ...}`; `0030: init_thread( unix_tid=13, ...)`.
 * These are the machine's ids, not the host's: processing turns them into host ids with the monitor's
 * `process.thread` events, which it records from inside each thread as it first runs. Nothing is looked up
 * here while the sample runs, so a process that lives a few milliseconds is mapped as surely as any.
 *
 * The trace comes on with the sample's first process (see wine-run.ts): its request is not in it, only the
 * answer, so its machine pid is not known; it is the init's child, whose host pid `sampleRoot` finds.
 */
export interface WineProcessIds {
  winpid: number;
  /** The host pid: only for the sample's first process. */
  pid?: number;
  /** The pid inside the machine. */
  nspid?: number;
  /** Wine tid (decimal) -> tid inside the machine. */
  nstids: Record<string, number>;
}

const FIRST_THREAD = /^([0-9a-f]+): init_first_thread\( unix_pid=(\d+), unix_tid=(\d+)/;
const FIRST_THREAD_REPLY = /^([0-9a-f]+): init_first_thread\(\) = 0 \{ pid=([0-9a-f]+), tid=([0-9a-f]+)/;
/** A thread made in the requester's own process (the current-process handle). */
const OWN_NEW_THREAD = /^([0-9a-f]+): new_thread\( process=ffffffff,/;
const NEW_THREAD_REPLY = /^([0-9a-f]+): new_thread\(\) = 0 \{ tid=([0-9a-f]+)/;
const THREAD_START = /^([0-9a-f]+): init_thread\( unix_tid=(\d+)/;

export class WinePidMap {
  private readonly byWinpid = new Map<number, WineProcessIds>();
  /** Wine tid -> its Wine pid, for the sample's threads. */
  private readonly processOf = new Map<number, number>();
  /** Requests in flight, by the requesting Wine tid: a first thread's machine ids, or a thread being made in its own process. */
  private readonly firstThreads = new Map<number, { nspid: number; nstid: number }>();
  private readonly makingThread = new Set<number>();
  private rest = '';
  /** Set once the sample is released: what comes before is Wine's boot. */
  private active = false;
  private root: Promise<void> = Promise.resolve();

  constructor(
    /** Host pid of the sample's first process. */
    private readonly sampleRoot: () => Promise<number | undefined>,
  ) {}

  /** The sample starts now: what was traced so far is Wine's boot. */
  released(): void {
    this.active = true;
  }

  /** Feeds wineserver's trace as it arrives; other lines are ignored. */
  feed(chunk: Buffer | string): void {
    const lines = (this.rest + chunk.toString()).split('\n');
    this.rest = lines.pop() ?? '';
    for (const line of lines) if (this.active) this.line(line);
  }

  /** The map, once the sample's first process is looked up. */
  async result(): Promise<WineProcessIds[]> {
    await this.root;
    return [...this.byWinpid.values()];
  }

  private line(line: string): void {
    let match = FIRST_THREAD.exec(line);
    if (match) {
      this.firstThreads.set(hex(match[1]!), { nspid: Number(match[2]), nstid: Number(match[3]) });
    } else if ((match = FIRST_THREAD_REPLY.exec(line))) {
      this.firstThread(hex(match[1]!), hex(match[2]!), hex(match[3]!));
    } else if ((match = OWN_NEW_THREAD.exec(line))) {
      this.makingThread.add(hex(match[1]!));
    } else if ((match = NEW_THREAD_REPLY.exec(line))) {
      this.threadMade(hex(match[1]!), hex(match[2]!));
    } else if ((match = THREAD_START.exec(line))) {
      this.threadStarted(hex(match[1]!), Number(match[2]));
    }
  }

  /** Wine reuses the ids of ended processes: a new first thread starts the Wine pid afresh. */
  private firstThread(requester: number, winpid: number, wintid: number): void {
    const ids = this.firstThreads.get(requester);
    this.firstThreads.delete(requester);
    if (ids) {
      this.byWinpid.set(winpid, { winpid, nspid: ids.nspid, nstids: { [wintid]: ids.nstid } });
    } else if (this.byWinpid.size === 0) {
      const entry: WineProcessIds = { winpid, nstids: {} };
      this.byWinpid.set(winpid, entry);
      this.root = this.sampleRoot().then((pid) => {
        if (pid !== undefined) entry.pid = pid;
      });
    } else {
      return;
    }
    this.processOf.set(wintid, winpid);
  }

  /** A thread made by a thread of the sample for its own process belongs to that process. */
  private threadMade(requester: number, wintid: number): void {
    const winpid = this.makingThread.delete(requester) ? this.processOf.get(requester) : undefined;
    if (winpid === undefined) this.processOf.delete(wintid);
    else this.processOf.set(wintid, winpid);
  }

  private threadStarted(wintid: number, nstid: number): void {
    const entry = this.byWinpid.get(this.processOf.get(wintid) ?? -1);
    if (entry) entry.nstids[wintid] = nstid;
  }
}

function hex(text: string): number {
  return parseInt(text, 16);
}
