import { domainsOf } from '../helpers/report-data.js';
import { ConnectionSignature } from '../connection-signature.js';
import type { SignatureContext, SignatureInfo } from '../signature.js';

const POOL_DOMAIN =
  /(^|[.-])(pool|mining|stratum)[.-]|(nanopool|minexmr|supportxmr|moneroocean|hashvault|f2pool|2miners|nicehash|ethermine|viabtc|antpool|slushpool|minergate|c3pool|herominers|unmineable|dwarfpool|miningpoolhub|poolin|flypool|zpool|prohashing|xmrpool|crypto-pool|monerohash|xmrig)\./i;
/** Ports mining pools listen on and little else uses (4444, also common, is left out: Metasploit's too). */
const POOL_PORTS = new Set([3333, 5555, 7777, 14433, 14444, 45560, 45700]);

export class MinerPool extends ConnectionSignature {
  readonly info: SignatureInfo = {
    name: 'miner_pool',
    description: 'Contacts cryptocurrency mining pools (pool domains or pool ports)',
    severity: 3,
    categories: ['cryptomining', 'network'],
    ttp: ['T1496'],
  };

  protected readonly ports = POOL_PORTS;

  override onComplete(ctx: SignatureContext): void {
    super.onComplete(ctx);
    for (const domain of domainsOf(ctx.report)) if (POOL_DOMAIN.test(domain)) this.markIoc('domain', domain, 'mining pool domain');
  }
}
