import { createReadStream } from 'node:fs';
import { lstat, open, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { BehaviorEvent } from './events.js';
import type { EventStream } from './event-streams.js';
import { RelayDecoder, type WindowsCall } from './wine-calls.js';

/**
 * The Windows calls of a Wine task (`logs/wine/relay.log`) as a stream of `win.call` events with host ids
 * and times, for the one pass over the behaviour log. Read in chunks: memory stays bounded whatever the
 * log's size.
 *
 * Times: Wine prints ticks of the machine's CLOCK_MONOTONIC_RAW; `logs/wine/clock.json` (`realtime`,
 * `monotonic`, read together before the sample started) turns them into the log's CLOCK_REALTIME seconds,
 * else the relay log's modification time is taken as the time of its last line.
 *
 * Ids: no Wine channel prints a process's host pid. `logs/wine/pids.json` (`[{winpid, nspid, nstids}]`:
 * the ids inside the machine, from wineserver's trace; the sample's first process has its host `pid`) names
 * them, and the monitor's `process.thread` events turn ids inside the machine into host ids. A Wine process
 * it does not name is matched to a host process of the behaviour log that ran Wine's loader, in order,
 * preferring one of the same program name (Wine names the host process after the program). A Wine process
 * left unmatched keeps its Wine pid.
 */

export const WINE_RELAY_LOG = 'logs/wine/relay.log';
const WINE_CLOCK = 'logs/wine/clock.json';
const WINE_PIDS = 'logs/wine/pids.json';

/** Wine's loader by its file or process name, as the monitor sees it run (`wine`, `wine64`, their preloaders). */
export const WINE_LOADER = /^wine(64)?(-preloader)?$/;
/** A host process name (comm) holds at most 15 characters. */
const COMM_LENGTH = 15;

interface HostProcess {
  pid: number;
  ppid: number;
  name: string;
}

/**
 * What the machine recorded of a Wine process: its host pid (the sample's first process) or its pid inside
 * the machine, and its threads' ids inside the machine (or, in logs of older versions, host tids) by Wine tid.
 */
interface KnownIds {
  pid?: number;
  nspid?: number;
  tids: ReadonlyMap<number, number>;
  nstids: ReadonlyMap<number, number>;
}

/** The stream of a task folder's Wine calls; undefined when the task ran no Windows program under Wine. */
export async function wineCallStream(dir: string): Promise<EventStream | undefined> {
  const relayLog = join(dir, WINE_RELAY_LOG);
  const stats = await lstat(relayLog).catch(() => undefined);
  if (!stats?.isFile()) return undefined;
  const offset = (await clockOffset(join(dir, WINE_CLOCK))) ?? (stats.mtimeMs / 1000 - (await lastTick(relayLog)));
  return new WineCallStream(relayLog, offset, await knownPids(join(dir, WINE_PIDS)));
}

class WineCallStream implements EventStream {
  readonly #decoder = new RelayDecoder();
  readonly #lines: AsyncIterator<string>;
  #rest = '';
  #ended = false;
  /** Host processes that ran Wine's loader, in the order they did, not yet given a Wine pid. */
  readonly #loaders: HostProcess[] = [];
  readonly #hosts = new Map<number, HostProcess>();
  readonly #byWinpid = new Map<number, HostProcess>();
  /** Host ids of the sample's threads by their ids inside the machine, as the monitor told them so far. */
  readonly #machineThreads = new Map<number, { pid: number; tid: number }>();

  constructor(
    path: string,
    private readonly offset: number,
    private readonly known: ReadonlyMap<number, KnownIds>,
  ) {
    const stream = createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 });
    this.#lines = (stream as AsyncIterable<string>)[Symbol.asyncIterator]();
  }

  async read(): Promise<readonly BehaviorEvent[]> {
    const calls: WindowsCall[] = [];
    while (calls.length === 0 && !this.#ended) {
      // A log that cannot be read on (gone, unreadable) ends the Windows calls, not the task's processing.
      const chunk = await this.#lines.next().catch(() => ({ done: true as const, value: undefined }));
      if (chunk.done) {
        this.#ended = true;
        for (const line of this.#rest.split('\n')) calls.push(...this.#decoder.line(line));
        calls.push(...this.#decoder.unfinished());
        break;
      }
      const lines = (this.#rest + chunk.value).split('\n');
      this.#rest = lines.pop() ?? '';
      for (const line of lines) calls.push(...this.#decoder.line(line));
    }
    for (const call of calls) call.ts = Math.round((call.ts + this.offset) * 1000) / 1000;
    return calls;
  }

  observe(event: BehaviorEvent): void {
    if (event.kind === 'process.exec' && event.ret >= 0) {
      const known = this.#hosts.get(event.pid);
      if (known || !WINE_LOADER.test(basename(event.path))) return;
      const program = event.argv[1] === undefined ? '' : windowsBasename(event.argv[1]);
      const host = { pid: event.pid, ppid: event.ppid, name: program };
      this.#hosts.set(event.pid, host);
      this.#loaders.push(host);
    } else if (event.kind === 'process.thread') {
      this.#machineThreads.set(event.machineTid, { pid: event.pid, tid: event.tid });
    } else if (event.kind === 'process.rename') {
      const host = this.#hosts.get(event.pid);
      if (host) host.name = event.name;
    }
  }

  admit(event: BehaviorEvent): BehaviorEvent {
    const call = event as WindowsCall;
    const host = this.#hostOf(call.winpid);
    call.pid = host.pid;
    call.ppid = host.ppid;
    // Wine's thread ids are no host ids: without the machine's record, the process's first thread is the
    // host process itself, and the others keep Wine's id.
    const first = this.#firstThread(call);
    call.tid = this.#knownTid(call.winpid, call.wintid) ?? (call.wintid === first ? host.pid : call.wintid);
    call.comm = host.name;
    return call;
  }

  readonly #firstThreads = new Map<number, number>();

  #knownTid(winpid: number, wintid: number): number | undefined {
    const known = this.known.get(winpid);
    const inMachine = known?.nstids.get(wintid);
    return known?.tids.get(wintid) ?? (inMachine === undefined ? undefined : this.#machineThreads.get(inMachine)?.tid);
  }

  /** The host pid the machine's record gives a Wine process, if the monitor has told it by now. */
  #knownPid(winpid: number): number | undefined {
    const known = this.known.get(winpid);
    return known?.pid ?? (known?.nspid === undefined ? undefined : this.#machineThreads.get(known.nspid)?.pid);
  }

  #firstThread(call: WindowsCall): number {
    const first = this.#firstThreads.get(call.winpid);
    if (first !== undefined) return first;
    this.#firstThreads.set(call.winpid, call.wintid);
    return call.wintid;
  }

  #hostOf(winpid: number): HostProcess {
    const known = this.#byWinpid.get(winpid);
    if (known) return known;
    const host = this.#matchedHost(winpid);
    this.#byWinpid.set(winpid, host);
    return host;
  }

  #matchedHost(winpid: number): HostProcess {
    const program = windowsBasename(this.#decoder.imageOf(winpid) ?? '').slice(0, COMM_LENGTH).toLowerCase();
    const creator = this.#decoder.creatorOf(winpid);
    const ppid = creator === undefined ? 0 : this.#hostOf(creator).pid;
    const given = this.#knownPid(winpid);
    if (given !== undefined) {
      const seen = this.#loaders.findIndex((host) => host.pid === given);
      if (seen >= 0) this.#loaders.splice(seen, 1);
      return this.#hosts.get(given) ?? { pid: given, ppid, name: program };
    }
    const sameName = this.#loaders.findIndex((host) => host.name.slice(0, COMM_LENGTH).toLowerCase() === program);
    const at = program !== '' && sameName >= 0 ? sameName : 0;
    const [matched] = this.#loaders.splice(at, 1);
    return matched ?? { pid: winpid, ppid, name: program };
  }
}

function windowsBasename(path: string): string {
  return path.split(/[\\/]/).pop()?.replace(/^"|"$/g, '') ?? '';
}

/** CLOCK_REALTIME minus Wine's tick clock, from the machine's record; undefined without one. */
async function clockOffset(path: string): Promise<number | undefined> {
  const clock = await readJson(path);
  if (typeof clock !== 'object' || clock === null) return undefined;
  const { realtime, monotonic } = clock as { realtime?: unknown; monotonic?: unknown };
  return typeof realtime === 'number' && typeof monotonic === 'number' ? realtime - monotonic : undefined;
}

/** Ids by Wine pid, from the machine's record when it wrote one. */
async function knownPids(path: string): Promise<Map<number, KnownIds>> {
  const list = await readJson(path);
  const pids = new Map<number, KnownIds>();
  if (!Array.isArray(list)) return pids;
  for (const entry of list as Array<Record<string, unknown> | null>) {
    if (!Number.isSafeInteger(entry?.winpid)) continue;
    const { pid, nspid } = entry!;
    pids.set(entry!.winpid as number, {
      ...(Number.isSafeInteger(pid) ? { pid: pid as number } : {}),
      ...(Number.isSafeInteger(nspid) ? { nspid: nspid as number } : {}),
      tids: idsByWineTid(entry!.tids),
      nstids: idsByWineTid(entry!.nstids),
    });
  }
  return pids;
}

function idsByWineTid(record: unknown): Map<number, number> {
  const ids = new Map<number, number>();
  if (typeof record !== 'object' || record === null) return ids;
  for (const [wintid, id] of Object.entries(record)) {
    if (Number.isSafeInteger(Number(wintid)) && Number.isSafeInteger(id)) ids.set(Number(wintid), id as number);
  }
  return ids;
}

async function readJson(path: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** The tick of the relay log's last line that has one. */
async function lastTick(path: string): Promise<number> {
  const ticks = [...(await tailOf(path)).matchAll(/^(\d+\.\d{3}):[0-9a-f]+:[0-9a-f]+:/gm)];
  return ticks.length === 0 ? 0 : Number(ticks.at(-1)![1]);
}

/** The size the machine cut a task's relay log at (its note ends the log), undefined when it did not. */
export async function relayLogCut(dir: string): Promise<number | undefined> {
  const cut = /^nestbox: relay log cut at (\d+) bytes/m.exec(await tailOf(join(dir, WINE_RELAY_LOG)).catch(() => ''));
  return cut ? Number(cut[1]) : undefined;
}

/** The last 64 KiB of a file as text. */
async function tailOf(path: string): Promise<string> {
  const file = await open(path, 'r');
  try {
    const { size } = await file.stat();
    const length = Math.min(size, 1 << 16);
    const { buffer } = await file.read(Buffer.alloc(length), 0, length, size - length);
    return buffer.toString('utf8');
  } finally {
    await file.close();
  }
}
