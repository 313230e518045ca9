import { invocationOf } from '../helpers/command-line.js';
import { domainsOf } from '../helpers/report-data.js';
import { ConnectionSignature } from '../connection-signature.js';
import type { EventOf, SignatureContext, SignatureInfo } from '../signature.js';

// SOCKS ports of Tor clients (9050 daemon, 9150 browser) and the usual relay/directory ports.
const TOR_PORTS = new Set([9050, 9150, 9001, 9030]);

export class TorUsage extends ConnectionSignature<'process.exec'> {
  readonly info: SignatureInfo = {
    name: 'tor_usage',
    description: 'Uses the Tor network (onion addresses, Tor ports or the tor program)',
    severity: 3,
    categories: ['network', 'anonymity'],
    ttp: ['T1090.003'],
  };
  protected readonly ports = TOR_PORTS;
  protected override readonly includeLocal = true;

  constructor() {
    super(['process.exec']);
  }

  override onEvent(event: EventOf<'net.connect'> | EventOf<'process.exec'>, ctx: SignatureContext): void {
    if (event.kind === 'process.exec') {
      if (invocationOf(event).program === 'tor') this.markEvent(event, ctx);
    } else {
      super.onEvent(event, ctx);
    }
  }

  override onComplete(ctx: SignatureContext): void {
    super.onComplete(ctx);
    for (const domain of domainsOf(ctx.report)) if (domain.endsWith('.onion')) this.markIoc('domain', domain, 'onion service');
  }
}
