import { Signature, type EventOf, type SignatureContext, type SignatureInfo } from '../signature.js';

/** A wait this long is longer than most sandboxes watch a sample. */
export const LONG_SLEEP_SECONDS = 60;

/**
 * A sample that sleeps for minutes before it acts hopes the sandbox gives up first. Benign scripts wait too,
 * so this is context (informational) on its own; sleep_evasion says when the sandbox had to cut a sleep short.
 * Only processes whose program the trace saw executed count, never whatever ran before the sample.
 */
export class LongSleep extends Signature<'process.sleep'> {
  readonly info: SignatureInfo = {
    name: 'long_sleep',
    description: `Sleeps for ${LONG_SLEEP_SECONDS} seconds or more, possibly to outwait the sandbox`,
    severity: 1,
    categories: ['anti-sandbox'],
    ttp: ['T1497.003'],
  };
  override readonly kinds = ['process.sleep'] as const;

  override onEvent(event: EventOf<'process.sleep'>, ctx: SignatureContext): void {
    if (event.seconds >= LONG_SLEEP_SECONDS && ctx.processes.get(event.pid)?.path) this.markEvent(event, ctx);
  }
}
