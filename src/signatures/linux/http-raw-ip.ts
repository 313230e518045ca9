import { isIpLiteral, isLocalAddress } from '../helpers/addresses.js';
import { Signature, type SignatureContext, type SignatureInfo } from '../signature.js';

export class HttpRawIp extends Signature<never> {
  readonly info: SignatureInfo = {
    name: 'http_raw_ip',
    description: 'Makes HTTP requests to a bare IP address instead of a domain name',
    severity: 2,
    categories: ['network'],
    ttp: ['T1071.001'],
  };

  override onComplete(ctx: SignatureContext): void {
    for (const request of ctx.report.network?.http ?? []) {
      const host = request.host.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');
      if (isIpLiteral(request.host) && !isLocalAddress(host)) this.markIoc('url', request.uri || `${request.host}${request.path}`, `${request.method} to an IP address`);
    }
  }
}
