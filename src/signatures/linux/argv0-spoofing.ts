import { isMasquerade } from '../helpers/masquerade.js';
import { Signature, type EventOf, type SignatureContext, type SignatureInfo } from '../signature.js';

/** A program started with argv[0] naming a kernel thread or system daemon it is not (`exec -a '[kworker/0:1]'`). */
export class Argv0Spoofing extends Signature<'process.exec'> {
  readonly info: SignatureInfo = {
    name: 'argv0_spoofing',
    description: 'Starts a program under a false name (argv[0]) that looks like a kernel thread or system daemon',
    severity: 3,
    categories: ['evasion', 'stealth'],
    ttp: ['T1036.005'],
  };
  override readonly kinds = ['process.exec'] as const;

  override onEvent(event: EventOf<'process.exec'>, ctx: SignatureContext): void {
    const argv0 = event.argv[0];
    if (event.ret >= 0 && argv0 !== undefined && isMasquerade(argv0, event.path)) this.markEvent(event, ctx);
  }
}
