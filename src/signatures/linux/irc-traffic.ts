import { ConnectionSignature, type Ports } from '../connection-signature.js';
import type { SignatureContext, SignatureInfo } from '../signature.js';

/** 6660 to 6669, and 6697 for IRC over TLS. */
const IRC_PORTS: Ports = { has: (port) => (port >= 6660 && port <= 6669) || port === 6697 };

export class IrcTraffic extends ConnectionSignature {
  readonly info: SignatureInfo = {
    name: 'irc_traffic',
    description: 'Talks IRC, a classic channel for controlling bots',
    severity: 3,
    categories: ['c2', 'network'],
    ttp: ['T1071'],
  };

  protected readonly ports = IRC_PORTS;

  override onComplete(ctx: SignatureContext): void {
    super.onComplete(ctx);
    for (const message of ctx.report.network?.irc ?? []) this.markIoc('irc', `${message.command} ${message.params}`.slice(0, 200), `IRC to ${message.dst}`);
  }
}
