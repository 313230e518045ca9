import { looksGenerated, registeredLabel } from '../helpers/domain-names.js';
import { domainsOf } from '../helpers/report-data.js';
import { Signature, type SignatureContext, type SignatureInfo } from '../signature.js';

/** A domain generator tries many names; one odd-looking name alone is not enough. */
const MIN_GENERATED = 3;

export class DgaDomains extends Signature<never> {
  readonly info: SignatureInfo = {
    name: 'dga_domains',
    description: 'Looks up several random-looking domain names (domain generation algorithm)',
    severity: 3,
    categories: ['c2', 'network'],
    ttp: ['T1568.002'],
  };

  override onComplete(ctx: SignatureContext): void {
    const generated = domainsOf(ctx.report).filter((domain) => looksGenerated(registeredLabel(domain)));
    if (generated.length < MIN_GENERATED) return;
    for (const domain of generated) this.markIoc('domain', domain, 'algorithmically generated-looking name');
  }
}
