import type { GuestRow } from '../db/schema.js';
import { formatCuckooDate } from '../util/time.js';

/**
 * A guest row as Cuckoo 2.0.7 writes it, in the API's task objects and in report.json's info.machine.
 * `withIds` is false for the copy inside the report.
 */
export function guestJson(guest: GuestRow, withIds: boolean) {
  return {
    ...(withIds ? { id: guest.id, task_id: guest.task_id } : {}),
    label: guest.label,
    manager: guest.manager,
    name: guest.name,
    shutdown_on: formatCuckooDate(guest.shutdown_on),
    started_on: formatCuckooDate(guest.started_on),
    status: guest.status,
  };
}
