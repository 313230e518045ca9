import type { BehaviorEvent } from '../../report/events.js';
import type { EventOf } from '../signature.js';
import { isRemoteInet } from './addresses.js';
import { basename } from './paths.js';

/** connect(2) on a non-blocking socket answers EINPROGRESS and still connects. */
export const EINPROGRESS = -115;
const STDIN = 0;
const STDOUT = 1;
const STDERR = 2;

/** How a socket came to be: connected out to another machine, or accepted from a listening socket. */
export type SocketOrigin = 'connected' | 'accepted';

export interface StdioSocket {
  origin: SocketOrigin;
  /** The calls that show it: the connect or the accept (when seen), then the copy onto the descriptor. */
  events: BehaviorEvent[];
}

interface KnownSocket {
  origin: SocketOrigin;
  event: BehaviorEvent;
}

/** Shells and the script interpreters reverse and bind shells hand the connection to. */
const SHELL_OR_INTERPRETER =
  /^(sh|bash|dash|zsh|ksh|ash|mksh|csh|tcsh|fish|busybox|python[0-9.]*|perl[0-9.]*|ruby[0-9.]*|php[0-9.]*|node|nodejs|lua[0-9.]*|tclsh[0-9.]*|pwsh)$/;

export function isShellOrInterpreter(path: string): boolean {
  return SHELL_OR_INTERPRETER.test(basename(path));
}

export type StdioSocketKind = 'net.connect' | 'net.accept' | 'process.fork' | 'file.dup';
export const STDIO_SOCKET_KINDS: readonly StdioSocketKind[] = ['net.connect', 'net.accept', 'process.fork', 'file.dup'];

/**
 * Which of each process's standard descriptors (0, 1, 2) are sockets, and where those sockets came from:
 * follows connects and accepts to their descriptors, copies (dup, dup2, dup3, fcntl F_DUPFD) and forks
 * (a child inherits its parent's descriptors). A socket copied onto stdin and stdout is what a shell
 * started afterwards reads its commands from and writes its answers to.
 */
export class StdioSockets {
  /** Per process, its sockets by descriptor (inherited on fork). */
  readonly #sockets = new Map<number, Map<number, KnownSocket>>();
  /** Per process, its standard descriptors that are sockets. */
  readonly #stdio = new Map<number, Map<number, StdioSocket>>();

  /** Follows one event; returns true when it made a standard descriptor a socket. */
  observe(event: EventOf<StdioSocketKind>): boolean {
    switch (event.kind) {
      case 'net.connect':
        if (isRemoteInet(event.family, event.address) && (event.ret >= 0 || event.ret === EINPROGRESS)) this.#socketsOf(event.pid).set(event.fd, { origin: 'connected', event });
        return false;
      case 'net.accept':
        if (event.ret >= 0) this.#socketsOf(event.pid).set(event.ret, { origin: 'accepted', event });
        return false;
      case 'process.fork':
        this.#inherit(event.pid, event.child);
        return false;
      case 'file.dup':
        return !(event.ret < 0) && this.#dup(event);
    }
  }

  /** The standard descriptors of a process that are sockets of this origin. */
  of(pid: number, origin: SocketOrigin): Map<number, StdioSocket> {
    const found = new Map<number, StdioSocket>();
    for (const [fd, socket] of this.#stdio.get(pid) ?? []) if (socket.origin === origin) found.set(fd, socket);
    return found;
  }

  /** Whether both stdin and stdout of a process are sockets of this origin: what a shell would talk over. */
  drives(pid: number, origin: SocketOrigin): boolean {
    const sockets = this.of(pid, origin);
    return sockets.has(STDIN) && sockets.has(STDOUT);
  }

  #dup(event: EventOf<'file.dup'>): boolean {
    const sockets = this.#socketsOf(event.pid);
    const known = this.#stillKnown(sockets.get(event.oldfd), event) ?? this.#fromDescription(event);
    if (known && event.object === 'socket') sockets.set(event.newfd, known);
    else sockets.delete(event.newfd);
    if (event.newfd > STDERR) return false;
    let stdio = this.#stdio.get(event.pid);
    if (!known || event.object !== 'socket') {
      stdio?.delete(event.newfd);
      return false;
    }
    if (!stdio) this.#stdio.set(event.pid, (stdio = new Map()));
    stdio.set(event.newfd, { origin: known.origin, events: [known.event, event] });
    return true;
  }

  /** The socket recorded at a descriptor, unless the copy shows the descriptor now holds another one (reused number). */
  #stillKnown(known: KnownSocket | undefined, event: EventOf<'file.dup'>): KnownSocket | undefined {
    if (!known || event.object !== 'socket') return undefined;
    const named = event.address !== undefined && event.address !== '';
    return known.origin === 'connected' && named && !isRemoteInet(event.family ?? '', event.address ?? '') ? undefined : known;
  }

  /** A socket the trace did not see made (inherited from before tracing), known by its peer alone. */
  #fromDescription(event: EventOf<'file.dup'>): KnownSocket | undefined {
    return event.object === 'socket' && isRemoteInet(event.family ?? '', event.address ?? '') ? { origin: 'connected', event } : undefined;
  }

  #inherit(parent: number, child: number): void {
    const sockets = this.#sockets.get(parent);
    if (sockets) this.#sockets.set(child, new Map(sockets));
    const stdio = this.#stdio.get(parent);
    if (stdio) this.#stdio.set(child, new Map(stdio));
  }

  #socketsOf(pid: number): Map<number, KnownSocket> {
    let sockets = this.#sockets.get(pid);
    if (!sockets) this.#sockets.set(pid, (sockets = new Map()));
    return sockets;
  }
}
