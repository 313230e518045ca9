import { StaticRuleSignature } from '../static-rule-signature.js';
import type { SignatureInfo } from '../signature.js';

/**
 * An executable that talks over the network: HTTP client APIs and sockets are informational, a download into a
 * file more, and one with the means to run what it downloaded most.
 */
export class StaticNetworkApis extends StaticRuleSignature {
  readonly strength = 3;
  readonly info: SignatureInfo = {
    name: 'static_network_apis',
    description: 'The executable carries network client APIs (WinINet, WinHTTP, Winsock, URLDownloadToFile, sockets to built-in addresses)',
    severity: 2,
    categories: ['network', 'static'],
    ttp: ['T1071.001', 'T1095', 'T1105', 'T1106'],
  };
}
