import { ConnectionSignature } from '../connection-signature.js';
import type { SignatureContext, SignatureInfo } from '../signature.js';

const SMTP_PORTS = new Set([25, 465, 587, 2525]);

export class OutboundSmtp extends ConnectionSignature {
  readonly info: SignatureInfo = {
    name: 'outbound_smtp',
    description: 'Sends mail directly over SMTP (spam bots, exfiltration)',
    severity: 3,
    categories: ['spam', 'network'],
    ttp: ['T1071.003'],
  };

  protected readonly ports = SMTP_PORTS;

  override onComplete(ctx: SignatureContext): void {
    super.onComplete(ctx);
    for (const session of ctx.report.network?.smtp ?? []) this.markIoc('smtp', session.dst, session.raw.slice(0, 200));
  }
}
