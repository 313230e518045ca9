import type { StaticRuleSignature } from '../static-rule-signature.js';
import { Signature, type SignatureContext, type SignatureInfo } from '../signature.js';
import { StaticAntidebug } from './static-antidebug.js';
import { StaticCryptoConstants } from './static-crypto-constants.js';
import { StaticElfInjection } from './static-elf-injection.js';
import { StaticKeylogger } from './static-keylogger.js';
import { StaticNetworkApis } from './static-network-apis.js';
import { StaticPeInjection } from './static-pe-injection.js';
import { StaticPersistence } from './static-persistence.js';

const CAPABILITIES: ReadonlyArray<new () => StaticRuleSignature> = [
  StaticPeInjection,
  StaticElfInjection,
  StaticKeylogger,
  StaticPersistence,
  StaticAntidebug,
  StaticNetworkApis,
  StaticCryptoConstants,
];

/** A capability this strong (its rules' strength, not its reported severity) (injection, keylogging) with another suspicious one (this strong at least), */
const SEVERE = 4;
const SUSPICIOUS = 2;
/** or two capabilities at least this strong (persistence, a downloader that runs what it fetched). */
const MALICIOUS_LEANING = 3;

/**
 * Each static capability alone has benign users (debuggers inject, installers create services, updaters
 * download and run). Carried together they are what malware is built from: an injector that also evades
 * debuggers, a keylogger that also persists, a dropper that downloads, runs and installs. Informational
 * capabilities (crypto constants, plain network APIs) do not count: an injecting tool that checks for
 * updates over HTTP is not made malicious by it.
 */
export class StaticCapabilityCombination extends Signature<never> {
  readonly info: SignatureInfo = {
    name: 'static_capability_combination',
    description: 'The executable combines a severe capability (injection, keylogging) with another suspicious one, or several malicious-leaning ones',
    severity: 3,
    categories: ['static'],
    ttp: [],
  };

  override onComplete(ctx: SignatureContext): void {
    const found = CAPABILITIES.map((Capability) => new Capability()).flatMap((capability) => {
      const severity = capability.strengthIn(ctx.report);
      return severity === undefined ? [] : [{ name: capability.info.name, severity }];
    });
    const atLeast = (severity: number) => found.filter((capability) => capability.severity >= severity).length;
    if (!((atLeast(SEVERE) >= 1 && atLeast(SUSPICIOUS) >= 2) || atLeast(MALICIOUS_LEANING) >= 2)) return;
    for (const capability of found) this.markIoc('capability', capability.name, `static capability of severity ${capability.severity}`);
  }
}
