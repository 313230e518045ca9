/**
 * What the analysis page reads: the task (GET /tasks/view/:id) and its report (Cuckoo's report.json
 * shape, declared once in src/report/report-types.ts). Every string in them may come from the sample.
 */
import type { DroppedFile, FileInfo, NetworkSection, Report, SignatureMatch } from '../../../src/report/report-types';

export type { DroppedFile, FileInfo, NetworkSection, Report, SignatureMatch };

/** A task as /tasks/view/:id shows it (the fields the page uses). */
export interface TaskView {
  id: number;
  category: string;
  target: string;
  status: string;
  package: string;
  machine: string | null;
  route: string | null;
  platform: string;
  timeout: number;
  priority: number;
  owner: string;
  tags: string[];
  added_on: string | null;
  started_on: string | null;
  completed_on: string | null;
  duration: number | null;
  errors: string[];
  sample: Partial<{ md5: string; sha1: string; sha256: string; file_size: number; file_type: string }>;
}

/** A process as the page shows it: from GET /ui/api/tasks/:id/processes, the live stream, or the report. */
export interface ProcessRow {
  pid: number;
  ppid: number;
  name: string;
  command_line: string;
  first_seen: number;
  /** How many calls it made (when known). */
  calls?: number;
}

/** A call as GET /ui/api/tasks/:id/calls lists it. */
export interface CallRow {
  pid: number;
  tid: number;
  time: number;
  api: string;
  category: string;
  arguments: Record<string, unknown>;
  return: number;
  status: boolean;
  repeated?: number;
}

/** States after which a task's report exists (or never will). */
export function isFinished(status: string): boolean {
  return status === 'reported' || status.startsWith('failed');
}
