import { isRemoteInet } from '../helpers/addresses.js';
import { Signature, type EventOf, type SignatureContext, type SignatureInfo } from '../signature.js';

type Kind = 'net.socket' | 'process.fork' | 'net.send';

const SOCK_STREAM = 1;
/** The socket type's low bits; the rest are SOCK_NONBLOCK and SOCK_CLOEXEC. */
const SOCK_TYPE_MASK = 0xf;
/** Ports whose traffic other parts of the report already name (DNS over TCP). */
const KNOWN_PORTS = new Set([53]);
/** How the first bytes of well-known protocols look (hex of the payload's start). */
const KNOWN_STARTS = [
  /^(474554|504f5354|48454144|505554|44454c455445|4f5054494f4e53|434f4e4e454354|5041544348)20/, // HTTP methods
  /^1603/, // TLS handshake record
  /^5353482d/, // "SSH-"
  /^(45484c4f|48454c4f|4e49434b|55534552|50415353)20/, // SMTP EHLO/HELO, IRC NICK/USER/PASS
];

/**
 * Bytes sent over a TCP connection to another machine in no protocol nestbox recognises: bots, miners and
 * backdoors often speak their own line or JSON protocols. The mark carries the payload's first bytes.
 */
export class RawTcpProtocol extends Signature<Kind> {
  readonly info: SignatureInfo = {
    name: 'raw_tcp_protocol',
    description: 'Sends data over raw TCP in a protocol that is not a standard one',
    severity: 2,
    categories: ['network', 'c2'],
    ttp: ['T1095'],
  };
  override readonly kinds: readonly Kind[] = ['net.socket', 'process.fork', 'net.send'];

  /** The TCP sockets of each process, by descriptor (inherited on fork). */
  readonly #streams = new Map<number, Set<number>>();

  override onEvent(event: EventOf<Kind>, ctx: SignatureContext): void {
    switch (event.kind) {
      case 'net.socket':
        this.#socket(event);
        break;
      case 'process.fork': {
        const streams = this.#streams.get(event.pid);
        if (streams) this.#streams.set(event.child, new Set(streams));
        break;
      }
      case 'net.send':
        if (this.#unknownStream(event)) this.markEvent(event, ctx);
        break;
    }
  }

  #socket(event: EventOf<'net.socket'>): void {
    const streams = this.#streams.get(event.pid);
    if (event.ret < 0) return;
    if ((event.type & SOCK_TYPE_MASK) !== SOCK_STREAM || (event.family !== 'inet' && event.family !== 'inet6')) {
      streams?.delete(event.ret);
      return;
    }
    if (streams) streams.add(event.ret);
    else this.#streams.set(event.pid, new Set([event.ret]));
  }

  #unknownStream(event: EventOf<'net.send'>): boolean {
    if (!event.payload || !event.address || !isRemoteInet(event.family ?? '', event.address)) return false;
    if (!this.#streams.get(event.pid)?.has(event.fd) || KNOWN_PORTS.has(event.port ?? 0)) return false;
    const payload = event.payload.toLowerCase();
    return !KNOWN_STARTS.some((start) => start.test(payload));
  }
}
