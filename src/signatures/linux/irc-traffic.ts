import { ConnectionSignature } from '../connection-signature.js';
import type { SignatureContext, SignatureInfo } from '../signature.js';

export class IrcTraffic extends ConnectionSignature {
  readonly info: SignatureInfo = {
    name: 'irc_traffic',
    description: 'Talks IRC, a classic channel for controlling bots',
    severity: 3,
    categories: ['c2', 'network'],
    ttp: ['T1071'],
  };

  protected wantsPort(port: number): boolean {
    return (port >= 6660 && port <= 6669) || port === 6697;
  }

  override onComplete(ctx: SignatureContext): void {
    super.onComplete(ctx);
    for (const message of ctx.report.network?.irc ?? []) this.markIoc('irc', `${message.command} ${message.params}`.slice(0, 200), `IRC to ${message.dst}`);
  }
}
