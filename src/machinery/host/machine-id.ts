import { randomBytes } from 'node:crypto';

/** Where this process's machine ids start: random, so that two processes rarely meet. */
let counter = randomBytes(4).readUInt32BE(0);

/**
 * Machine ids name everything a machine creates (run folder, mounts, cgroups, network). At most 8
 * characters, so network interface names fit Linux's 15: the task id in base 36, `_`, then hex digits
 * counted on from a random start. One process never makes the same id twice within 16^digits ids (a
 * rescheduled task, tests); two processes running the same task id at once (tests) rarely meet.
 */
export function machineId(taskId: number): string {
  const task = taskId.toString(36);
  counter = (counter + 1) >>> 0;
  if (task.length > 6) return counter.toString(16).padStart(8, '0');
  const digits = 8 - task.length - 1;
  return `${task}_${(counter % 16 ** digits).toString(16).padStart(digits, '0')}`;
}

const MACHINE_ID = /^(?:[0-9a-z]{1,6}_[0-9a-f]{1,6}|[0-9a-f]{8})$/;

/** Whether a name is one machineId() makes: cleanup never touches anything else. */
export function isMachineId(name: string): boolean {
  return MACHINE_ID.test(name);
}
