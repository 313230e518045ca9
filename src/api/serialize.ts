import { decodeList } from '../db/json-columns.js';
import type { MachineRow, SampleRow, TaskRow } from '../db/schema.js';
import { guestJson } from '../report/guest-json.js';
import type { TaskDetails } from '../tasks/details.js';
import { parseOptions } from '../db/task-options.js';
import { formatCuckooDate } from '../util/time.js';

/** Converters from database rows to the JSON objects of the Cuckoo 2.0.7 API (field names and types). */

export function taskJson(task: TaskRow, details: TaskDetails = {}) {
  return {
    added_on: formatCuckooDate(task.added_on),
    category: task.category,
    clock: formatCuckooDate(task.clock),
    completed_on: formatCuckooDate(task.completed_on),
    custom: task.custom,
    duration: durationSeconds(task.started_on, task.completed_on),
    enforce_timeout: task.enforce_timeout === 1,
    errors: (details.errors ?? []).map((error) => error.message),
    guest: details.guest ? guestJson(details.guest, true) : {},
    id: task.id,
    machine: task.machine,
    memory: task.memory === 1,
    options: parseOptions(task.options),
    owner: task.owner,
    package: task.package,
    platform: task.platform,
    priority: task.priority,
    processing: task.processing,
    route: task.route,
    sample: details.sample ? sampleJson(details.sample) : {},
    sample_id: task.sample_id,
    started_on: formatCuckooDate(task.started_on),
    status: task.status,
    submit_id: task.submit_id,
    tags: decodeList(task.tags),
    target: task.target,
    timeout: task.timeout,
  };
}

export function sampleJson(sample: SampleRow) {
  return {
    crc32: sample.crc32,
    file_size: sample.file_size,
    file_type: sample.file_type,
    id: sample.id,
    md5: sample.md5,
    sha1: sample.sha1,
    sha256: sample.sha256,
    sha512: sample.sha512,
    ssdeep: sample.ssdeep,
  };
}

export function machineJson(machine: MachineRow) {
  return {
    id: machine.id,
    interface: machine.interface,
    ip: machine.ip,
    label: machine.label,
    locked: machine.locked === 1,
    locked_changed_on: formatCuckooDate(machine.locked_changed_on),
    name: machine.name,
    // nestbox's: the node that runs the machine ('' for a machine from before the cluster).
    node: machine.node,
    options: decodeList(machine.options),
    platform: machine.platform,
    rcparams: {},
    resultserver_ip: machine.resultserver_ip,
    resultserver_port: machine.resultserver_port,
    snapshot: machine.snapshot,
    status: machine.status,
    status_changed_on: formatCuckooDate(machine.status_changed_on),
    tags: decodeList(machine.tags),
  };
}

function durationSeconds(started: string | null, completed: string | null): number {
  if (started === null || completed === null) return -1;
  return Math.max(0, Math.round((Date.parse(completed) - Date.parse(started)) / 1000));
}
