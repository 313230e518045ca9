import { Signature, type EventOf, type SignatureContext, type SignatureInfo } from '../signature.js';

const PROC_MEM = /^\/proc\/(\d+)\/mem$/;

/** Reading another process's memory through /proc/<pid>/mem, as credential dumpers (mimipenguin) do. */
export class ProcMemDump extends Signature<'file.open'> {
  readonly info: SignatureInfo = {
    name: 'proc_mem_dump',
    description: 'Reads the memory of other processes through /proc/<pid>/mem',
    severity: 4,
    categories: ['credential_access'],
    ttp: ['T1003.007'],
  };
  override readonly kinds = ['file.open'] as const;

  override onEvent(event: EventOf<'file.open'>, ctx: SignatureContext): void {
    const pid = Number(PROC_MEM.exec(event.path)?.[1] ?? NaN);
    if (Number.isInteger(pid) && pid !== event.pid && pid !== event.tid) this.markEvent(event, ctx);
  }
}
