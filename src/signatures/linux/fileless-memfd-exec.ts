import type { BehaviorEvent } from '../../report/events.js';
import { Signature, type EventOf, type SignatureContext, type SignatureInfo } from '../signature.js';

type Kind = 'memory.memfd' | 'process.exec' | 'memory.exec_map';

const MEMFD_PATH = /^\/?memfd:/;
const FD_PATH = /^\/(proc\/(self|\d+)\/fd|dev\/fd)\/\d+$/;

/**
 * Code run straight from memory: a memfd created and then executed through /proc/self/fd/N (fexecve) or
 * mapped executable. The payload never exists as an ordinary file.
 */
export class FilelessMemfdExec extends Signature<Kind> {
  readonly info: SignatureInfo = {
    name: 'fileless_memfd_exec',
    description: 'Executes code from an anonymous memory file (memfd), without writing it to disk',
    severity: 4,
    categories: ['fileless', 'evasion'],
    ttp: ['T1620', 'T1027.011'],
  };
  override readonly kinds: readonly Kind[] = ['memory.memfd', 'process.exec', 'memory.exec_map'];

  readonly #memfds: BehaviorEvent[] = [];

  override onEvent(event: EventOf<Kind>, ctx: SignatureContext): void {
    if (event.kind === 'memory.memfd') {
      this.#memfds.push(event);
    } else if (event.kind === 'process.exec') {
      if (MEMFD_PATH.test(event.path) || (FD_PATH.test(event.path) && this.#memfds.length > 0)) this.#markRun(event, ctx);
    } else if (MEMFD_PATH.test(event.path ?? '')) {
      this.#markRun(event, ctx);
    }
  }

  #markRun(run: BehaviorEvent, ctx: SignatureContext): void {
    const family = new Set([run.pid, ...ctx.processes.ancestors(run.pid).map((process) => process.pid)]);
    for (const memfd of this.#memfds) if (family.has(memfd.pid)) this.markEvent(memfd, ctx);
    this.markEvent(run, ctx);
  }
}
