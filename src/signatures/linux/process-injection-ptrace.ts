import { Signature, type EventOf, type SignatureContext, type SignatureInfo } from '../signature.js';

// ptrace requests that take control of another process or change its memory or registers.
const PTRACE_POKETEXT = 4;
const PTRACE_POKEDATA = 5;
const PTRACE_POKEUSER = 6;
const PTRACE_SETREGS = 13;
const PTRACE_ATTACH = 16;
const PTRACE_SEIZE = 0x4206;
const CONTROLLING = new Set([PTRACE_POKETEXT, PTRACE_POKEDATA, PTRACE_POKEUSER, PTRACE_SETREGS, PTRACE_ATTACH, PTRACE_SEIZE]);

export class ProcessInjectionPtrace extends Signature<'process.ptrace'> {
  readonly info: SignatureInfo = {
    name: 'process_injection_ptrace',
    description: 'Attaches to another process with ptrace or writes into its memory or registers',
    severity: 4,
    categories: ['injection'],
    ttp: ['T1055.008'],
  };
  override readonly kinds = ['process.ptrace'] as const;

  override onEvent(event: EventOf<'process.ptrace'>, ctx: SignatureContext): void {
    if (CONTROLLING.has(event.request) && event.target > 0 && event.target !== event.pid) this.markEvent(event, ctx);
  }
}
