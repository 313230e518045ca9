import type { BehaviorEvent } from '../report/events.js';
import { basename } from './helpers/paths.js';

export interface ProcessInfo {
  pid: number;
  ppid: number;
  /** The executable of the current image, '' until its exec is seen (processes that started before tracing). */
  path: string;
  argv: string[];
  /** The current name (comm), after any rename. */
  comm: string;
  firstSeen: number;
}

/**
 * What the engine knows about every process of the analysis while it reads the log: the image each one runs
 * now and its parent, so that signatures can ask "what is this pid" and "who started it".
 */
export class ProcessTable {
  readonly #byPid = new Map<number, ProcessInfo>();

  observe(event: BehaviorEvent): void {
    const process = this.#ensure(event);
    switch (event.kind) {
      case 'process.fork':
        this.#byPid.set(event.child, { ...process, pid: event.child, ppid: event.pid, argv: [...process.argv], firstSeen: event.ts });
        break;
      case 'process.exec':
        if (event.ret < 0) break;
        process.path = event.path;
        process.argv = event.argv;
        process.comm = basename(event.path).slice(0, 15);
        break;
      case 'process.rename':
        process.comm = event.name;
        break;
      case 'win.process':
        // A Windows guest's process, as its monitor named it: its program is a Windows path.
        process.ppid = event.ppid;
        process.path = event.path;
        process.comm = event.comm;
        break;
      default:
        break;
    }
  }

  get(pid: number): ProcessInfo | undefined {
    return this.#byPid.get(pid);
  }

  /** The parent, its parent, and so on (nearest first). */
  ancestors(pid: number): ProcessInfo[] {
    const chain: ProcessInfo[] = [];
    const seen = new Set([pid]);
    let current = this.#byPid.get(pid);
    while (current && !seen.has(current.ppid)) {
      seen.add(current.ppid);
      current = this.#byPid.get(current.ppid);
      if (current) chain.push(current);
    }
    return chain;
  }

  #ensure(event: BehaviorEvent): ProcessInfo {
    let process = this.#byPid.get(event.pid);
    if (!process) {
      process = { pid: event.pid, ppid: event.ppid, path: '', argv: [], comm: event.comm, firstSeen: event.ts };
      this.#byPid.set(event.pid, process);
    }
    return process;
  }
}
