import { Signature, type SignatureContext, type SignatureInfo } from '../signature.js';

export class DnsTxtQuery extends Signature<never> {
  readonly info: SignatureInfo = {
    name: 'dns_txt_query',
    description: 'Queries DNS TXT records, which malware uses to fetch commands or configuration',
    severity: 2,
    categories: ['c2', 'network'],
    ttp: ['T1071.004'],
  };

  override onComplete(ctx: SignatureContext): void {
    for (const query of ctx.report.network?.dns ?? []) {
      if (query.type.toUpperCase() === 'TXT') this.markIoc('dns', query.request, 'TXT query');
    }
  }
}
