import { basename } from 'node:path';
import type { IndexedProcess } from '../report/calls-index.js';
import { commandLine } from '../report/command-line.js';
import type { BehaviorEvent } from '../report/events.js';

/** As many processes as the behaviour section lists (processing's DEFAULT_BEHAVIOR_LIMITS.processes). */
export const MAX_LIVE_PROCESSES = 10_000;

/**
 * The sample's processes while it runs, from its events as they arrive, named as the behaviour section
 * will name them: a process is known from its first event or its parent's fork (taking the parent's
 * image), and named by each exec that succeeds. `calls` counts the calls seen so far.
 */
export class LiveProcesses {
  readonly #byPid = new Map<number, IndexedProcess>();

  has(pid: number): boolean {
    return this.#byPid.has(pid);
  }

  /** The rows this event made or renamed (the stream sends them again); none for the tracer's notes. */
  observe(event: BehaviorEvent, isCall: boolean): IndexedProcess[] {
    if (event.kind.startsWith('tracer.')) return [];
    const changed: IndexedProcess[] = [];
    const process = this.#byPid.get(event.pid) ?? this.#track(event.pid, event.ppid, event.comm ?? '', event.ts, '', changed);
    if (!process) return changed;
    if (isCall) process.calls++;
    if (event.kind === 'process.fork' && !this.#byPid.has(event.child)) {
      this.#track(event.child, process.pid, process.name, event.ts, process.command_line, changed);
    } else if (event.kind === 'process.exec' && event.ret >= 0) {
      process.name = basename(String(event.path)) || process.name;
      process.command_line = commandLine(event.argv);
      if (!changed.includes(process)) changed.push(process);
    }
    return changed;
  }

  /** A call of a known process, counted without reading its event. */
  count(pid: number): void {
    const process = this.#byPid.get(pid);
    if (process) process.calls++;
  }

  #track(pid: number, ppid: number, name: string, firstSeen: number, commandLine: string, changed: IndexedProcess[]): IndexedProcess | undefined {
    if (this.#byPid.size >= MAX_LIVE_PROCESSES) return undefined;
    const process: IndexedProcess = { pid, ppid, name, command_line: commandLine, first_seen: firstSeen, calls: 0 };
    this.#byPid.set(pid, process);
    changed.push(process);
    return process;
  }
}
