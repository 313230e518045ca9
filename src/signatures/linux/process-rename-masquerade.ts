import { isMasquerade } from '../helpers/masquerade.js';
import { Signature, type EventOf, type SignatureContext, type SignatureInfo } from '../signature.js';

export class ProcessRenameMasquerade extends Signature<'process.rename'> {
  readonly info: SignatureInfo = {
    name: 'process_rename_masquerade',
    description: 'Renames its process to look like a kernel thread or a system daemon',
    severity: 3,
    categories: ['evasion', 'stealth'],
    ttp: ['T1036.004'],
  };
  override readonly kinds = ['process.rename'] as const;

  override onEvent(event: EventOf<'process.rename'>, ctx: SignatureContext): void {
    const image = ctx.processes.get(event.pid)?.path ?? '';
    if (isMasquerade(event.name, image)) this.markEvent(event, ctx);
  }
}
