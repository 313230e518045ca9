import { invocationOf, commandLine } from '../helpers/command-line.js';
import { needlesInFile } from '../helpers/file-search.js';
import { Signature, type EventOf, type SignatureContext, type SignatureInfo } from '../signature.js';

/** Stratum's JSON-RPC method names, as they travel in clear text to mining pools. */
const STRATUM_METHODS = ['mining.subscribe', 'mining.authorize', 'mining.submit', 'mining.notify'];
const STRATUM_URL = /stratum\d?\+(tcp|ssl|tls):\/\//i;
const MINER_PROGRAM = /^(xmrig|xmr-stak|minerd|cpuminer|ccminer|cgminer|bfgminer|ethminer|nbminer|t-rex|lolminer|phoenixminer|kdevtmpfsi|kinsing)/i;

/** Cryptocurrency mining seen in the traffic (stratum protocol), command lines or the sample's strings. */
export class MinerStratum extends Signature<'process.exec'> {
  readonly info: SignatureInfo = {
    name: 'miner_stratum',
    description: 'Mines cryptocurrency: stratum mining protocol or miner software',
    severity: 4,
    categories: ['cryptomining'],
    ttp: ['T1496'],
  };
  override readonly kinds = ['process.exec'] as const;

  override onEvent(event: EventOf<'process.exec'>, ctx: SignatureContext): void {
    const { program } = invocationOf(event);
    if (MINER_PROGRAM.test(program) || STRATUM_URL.test(commandLine(event.argv))) this.markEvent(event, ctx);
  }

  override async onComplete(ctx: SignatureContext): Promise<void> {
    for (const method of await needlesInFile(ctx.paths.pcap, STRATUM_METHODS)) this.markIoc('traffic', method, 'stratum method in the capture');
    for (const request of ctx.report.network?.http ?? []) {
      const method = STRATUM_METHODS.find((name) => request.body.includes(name) || request.data.includes(name));
      if (method) this.markIoc('traffic', method, `stratum method in HTTP to ${request.host}`);
    }
    for (const text of ctx.report.strings ?? []) {
      if (STRATUM_URL.test(text) || STRATUM_METHODS.some((name) => text.includes(name))) this.markIoc('string', text.slice(0, 200), 'mining string in the sample');
    }
  }
}
