import type { BehaviorEvent } from '../../report/events.js';
import { isShellOrInterpreter, STDIO_SOCKET_KINDS, StdioSockets, type StdioSocketKind } from '../helpers/stdio-sockets.js';
import { Signature, type EventOf, type SignatureContext, type SignatureInfo } from '../signature.js';

type Kind = StdioSocketKind | 'net.listen' | 'process.exec';

/**
 * A shell served on a port: the sample listens, accepts a connection and makes it the standard input and
 * output of a shell or script interpreter (copied by dup2, dup3 or fcntl F_DUPFD, in the process or a parent
 * it inherited them from), so that whoever connects drives it. Shown when the shell or interpreter is
 * executed with the accepted socket on stdin and stdout, or when a process that already is one puts it there.
 */
export class BindShell extends Signature<Kind> {
  readonly info: SignatureInfo = {
    name: 'bind_shell',
    description: 'Listens for connections and hands an accepted one to a shell or interpreter as its input and output (bind shell)',
    severity: 5,
    categories: ['backdoor'],
    ttp: ['T1059.004', 'T1095'],
  };
  override readonly kinds: readonly Kind[] = [...STDIO_SOCKET_KINDS, 'net.listen', 'process.exec'];

  readonly #stdio = new StdioSockets();
  /** The listen call of each process (inherited on fork), to show with the match. */
  readonly #listens = new Map<number, BehaviorEvent>();

  override onEvent(event: EventOf<Kind>, ctx: SignatureContext): void {
    switch (event.kind) {
      case 'net.listen':
        if (event.ret >= 0) this.#listens.set(event.pid, event);
        return;
      case 'process.exec':
        if (event.ret >= 0 && isShellOrInterpreter(event.path)) this.#markDriven(event.pid, event, ctx);
        return;
      default: {
        const madeStdio = this.#stdio.observe(event);
        if (event.kind === 'process.fork') this.#inherit(event.pid, event.child);
        else if (madeStdio && isShellOrInterpreter(ctx.processes.get(event.pid)?.path ?? '')) this.#markDriven(event.pid, null, ctx);
      }
    }
  }

  #inherit(parent: number, child: number): void {
    const listen = this.#listens.get(parent);
    if (listen) this.#listens.set(child, listen);
  }

  #markDriven(pid: number, exec: BehaviorEvent | null, ctx: SignatureContext): void {
    if (!this.#stdio.drives(pid, 'accepted')) return;
    const listen = this.#listens.get(pid);
    if (listen) this.markEvent(listen, ctx);
    for (const socket of this.#stdio.of(pid, 'accepted').values()) for (const shown of socket.events) this.markEvent(shown, ctx);
    if (exec) this.markEvent(exec, ctx);
  }
}
