import { randomBytes } from 'node:crypto';

/**
 * Machine ids name everything a machine creates (run folder, mounts, cgroups, network). At most 8
 * characters, so network interface names fit Linux's 15: the task id in base 36, `_`, then random hex,
 * so two processes running the same task id at once (tests, a rescheduled task) never collide.
 */
export function machineId(taskId: number): string {
  const task = taskId.toString(36);
  const random = randomBytes(4).toString('hex');
  return task.length <= 6 ? `${task}_${random}`.slice(0, 8) : random;
}

const MACHINE_ID = /^(?:[0-9a-z]{1,6}_[0-9a-f]{1,6}|[0-9a-f]{8})$/;

/** Whether a name is one machineId() makes: cleanup never touches anything else. */
export function isMachineId(name: string): boolean {
  return MACHINE_ID.test(name);
}
