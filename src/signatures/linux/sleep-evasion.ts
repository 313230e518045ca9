import { Signature, type SignatureContext, type SignatureInfo } from '../signature.js';

/**
 * Time-based evasion: the sample asked to sleep longer than the machine lets a sample wait, so the
 * supervisor ended the sleep at once (the report's `debug.skipped_sleeps`). Sleeping is common in benign
 * scripts too, so this is suspicious rather than malicious on its own: it adds to what the sample did
 * once awake. Sleeps of processes that the trace knows but never saw executed (whatever ran before the
 * sample) do not count.
 */
export class SleepEvasion extends Signature<never> {
  readonly info: SignatureInfo = {
    name: 'sleep_evasion',
    description: 'Tries to outwait the analysis with a long sleep, which the sandbox shortened (time-based evasion)',
    severity: 2,
    categories: ['anti-sandbox'],
    ttp: ['T1497.003'],
  };

  override onComplete(ctx: SignatureContext): void {
    for (const sleep of ctx.report.debug?.skipped_sleeps ?? []) {
      const process = ctx.processes.get(sleep.pid);
      if (process && !process.path) continue;
      this.mark({ pid: sleep.pid, call: sleep.call, seconds: sleep.seconds, time: sleep.time, description: `asked to sleep ${sleep.seconds} s; the sleep was cut short` });
    }
  }
}
