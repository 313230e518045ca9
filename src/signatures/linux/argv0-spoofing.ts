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
    if (event.ret < 0 || argv0 === undefined || runsThroughInterpreter(event)) return;
    if (isMasquerade(argv0, event.path)) this.markEvent(event, ctx);
  }
}

/**
 * A script run by its `#!` line: the kernel itself puts the interpreter's path (`/bin/sh`) in argv[0],
 * then its optional argument, then the script's path. That argv[0] is no name the program chose.
 */
function runsThroughInterpreter(event: EventOf<'process.exec'>): boolean {
  const [argv0 = '', ...rest] = event.argv;
  return argv0.startsWith('/') && (rest[0] === event.path || rest[1] === event.path);
}
