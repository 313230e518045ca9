import { Signature, type EventOf, type SignatureContext, type SignatureInfo } from '../signature.js';

const PTRACE_TRACEME = 0;

/** PTRACE_TRACEME fails when a debugger or tracer is already attached: the classic Linux debugger check. */
export class AntidebugPtraceTraceme extends Signature<'process.ptrace'> {
  readonly info: SignatureInfo = {
    name: 'antidebug_ptrace_traceme',
    description: 'Checks for a debugger with ptrace(PTRACE_TRACEME)',
    severity: 2,
    categories: ['anti-debug'],
    ttp: ['T1622'],
  };
  override readonly kinds = ['process.ptrace'] as const;

  override onEvent(event: EventOf<'process.ptrace'>, ctx: SignatureContext): void {
    if (event.request === PTRACE_TRACEME) this.markEvent(event, ctx);
  }
}
