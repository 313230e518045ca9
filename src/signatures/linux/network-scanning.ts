import { isRemoteInet, isLocalAddress } from '../helpers/addresses.js';
import { flowsOf } from '../helpers/report-data.js';
import { Signature, type EventOf, type SignatureContext, type SignatureInfo } from '../signature.js';

/** Distinct hosts on one port, or distinct ports on one host, that make a scan. */
const SCAN_WIDTH = 20;

/** Connection attempts to many hosts on one port (worms, SSH/Telnet brute-forcers) or many ports on one host. */
export class NetworkScanning extends Signature<'net.connect'> {
  readonly info: SignatureInfo = {
    name: 'network_scanning',
    description: 'Tries to connect to many hosts or many ports (network scanning)',
    severity: 3,
    categories: ['network', 'worm'],
    ttp: ['T1046'],
  };
  override readonly kinds = ['net.connect'] as const;

  readonly #hostsByPort = new Map<number, Set<string>>();
  readonly #portsByHost = new Map<string, Set<number>>();

  override onEvent(event: EventOf<'net.connect'>): void {
    if (isRemoteInet(event.family, event.address) && event.port !== 53) this.#add(event.address, event.port);
  }

  override onComplete(ctx: SignatureContext): void {
    for (const flow of flowsOf(ctx.report)) if (flow.protocol === 'tcp' && !isLocalAddress(flow.dst) && flow.dport !== 53) this.#add(flow.dst, flow.dport);
    for (const [port, hosts] of this.#hostsByPort) {
      if (hosts.size >= SCAN_WIDTH) this.markIoc('scan', `port ${port}`, `${hosts.size} hosts, e.g. ${[...hosts].slice(0, 5).join(', ')}`);
    }
    for (const [host, ports] of this.#portsByHost) {
      if (ports.size >= SCAN_WIDTH) this.markIoc('scan', host, `${ports.size} ports, e.g. ${[...ports].slice(0, 5).join(', ')}`);
    }
  }

  #add(host: string, port: number): void {
    const hosts = this.#hostsByPort.get(port) ?? new Set<string>();
    hosts.add(host);
    this.#hostsByPort.set(port, hosts);
    const ports = this.#portsByHost.get(host) ?? new Set<number>();
    ports.add(port);
    this.#portsByHost.set(host, ports);
  }
}
