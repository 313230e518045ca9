import { Signature, type EventOf, type SignatureContext, type SignatureInfo } from '../signature.js';

const SET_ID = /^set(res|re|fs)?[ug]id(32)?$/;

/** set*uid(0)/set*gid(0): asking to become root, which an ordinary program never needs to. */
export class PrivescSetuidRoot extends Signature<'process.setid'> {
  readonly info: SignatureInfo = {
    name: 'privesc_setuid_root',
    description: 'Tries to switch to user or group id 0 (root)',
    severity: 3,
    categories: ['privilege_escalation'],
    ttp: ['T1548.001'],
  };
  override readonly kinds = ['process.setid'] as const;

  override onEvent(event: EventOf<'process.setid'>, ctx: SignatureContext): void {
    if (SET_ID.test(event.call) && event.ids.includes(0)) this.markEvent(event, ctx);
  }
}
