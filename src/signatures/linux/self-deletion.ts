import { scriptOf } from '../helpers/command-line.js';
import { samePath } from '../helpers/paths.js';
import type { ProcessInfo } from '../process-table.js';
import { Signature, type EventOf, type SignatureContext, type SignatureInfo } from '../signature.js';

/**
 * A process deletes the file it runs from: its own executable, the script its interpreter runs, or that of a
 * process up its parent chain (a script's `rm -- "$0"` runs in a child `rm`).
 */
export class SelfDeletion extends Signature<'file.delete'> {
  readonly info: SignatureInfo = {
    name: 'self_deletion',
    description: 'Deletes its own executable or script to remove traces',
    severity: 3,
    categories: ['evasion'],
    ttp: ['T1070.004'],
  };
  override readonly kinds = ['file.delete'] as const;

  override onEvent(event: EventOf<'file.delete'>, ctx: SignatureContext): void {
    const self = ctx.processes.get(event.pid);
    const family = [...(self ? [self] : []), ...ctx.processes.ancestors(event.pid)];
    if (family.some((process) => runsFrom(process).some((path) => samePath(path, event.path)))) this.markEvent(event, ctx);
  }
}

function runsFrom(process: ProcessInfo): string[] {
  const script = scriptOf(process.path, process.argv);
  return [process.path, ...(script ? [script] : [])].filter((path) => path !== '');
}
