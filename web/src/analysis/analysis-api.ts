/** The requests of the analysis page: the task, its report (whole or by section) and its calls. */
import { ApiError, getJson } from '../api';
import type { CallRow, ProcessRow, Report, TaskView } from './report';

export async function loadTask(id: number, signal?: AbortSignal): Promise<TaskView> {
  return (await getJson<{ task: TaskView }>(`/tasks/view/${id}`, signal)).task;
}

/**
 * The report without its bulky parts (calls, memory, screenshots, debug log): Cuckoo's summary. Those
 * parts are read by the sections that show them, so a task with a million calls opens quickly.
 */
export function loadSummary(id: number, signal?: AbortSignal): Promise<Report> {
  return getJson<Report>(`/tasks/summary/${id}`, signal);
}

/** One top-level section of the report, or null when the report has none. */
export async function loadSection<K extends keyof Report>(id: number, key: K, signal?: AbortSignal): Promise<Report[K] | null> {
  try {
    return await getJson<Report[K]>(`/tasks/report/${id}/json?elements=${encodeURIComponent(String(key))}`, signal);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return null;
    throw error;
  }
}

export interface CallQuery {
  pid: number | null;
  /** System call names, separated by commas. */
  api: string;
  category: string;
  /** Text looked for in the arguments. */
  q: string;
  offset: number;
  limit: number;
}

export interface CallPage {
  calls: CallRow[];
  total: number;
}

export async function loadProcesses(id: number, signal?: AbortSignal): Promise<ProcessRow[]> {
  return (await getJson<{ processes: ProcessRow[] }>(`/ui/api/tasks/${id}/processes`, signal)).processes;
}

export function loadCalls(id: number, query: CallQuery, signal?: AbortSignal): Promise<CallPage> {
  const params = new URLSearchParams({ offset: String(query.offset), limit: String(query.limit) });
  if (query.pid !== null) params.set('pid', String(query.pid));
  if (query.api.trim()) params.set('api', query.api.trim());
  if (query.category) params.set('category', query.category);
  if (query.q.trim()) params.set('q', query.q.trim());
  return getJson<CallPage>(`/ui/api/tasks/${id}/calls?${params}`, signal);
}

/**
 * Downloads as zip archives with the password `infected` (served by the session's download routes).
 * A link is made only from a value of the expected form (a hash, a pid), never from other report text.
 */
export const downloads = {
  sample: (id: number) => `/ui/api/tasks/${id}/download/sample`,
  dropped: (id: number, sha256: unknown) => (isSha256(sha256) ? `/ui/api/tasks/${id}/download/dropped/${sha256}` : null),
  memory: (id: number, pid: unknown) => (isPid(pid) ? `/ui/api/tasks/${id}/download/memory/${pid}` : null),
  pcap: (id: number) => `/ui/api/tasks/${id}/download/pcap`,
};

/** A screenshot's address, from its stored name (`shots/0001.jpg` -> /tasks/screenshots/:id/0001). */
export function screenshotUrl(id: number, path: unknown): string | null {
  const stem = typeof path === 'string' ? /(?:^|\/)(\d{1,8})\.(?:jpg|png)$/.exec(path)?.[1] : undefined;
  return stem === undefined ? null : `/tasks/screenshots/${id}/${stem}`;
}

function isSha256(value: unknown): value is string {
  return typeof value === 'string' && /^[0-9a-f]{64}$/.test(value);
}

function isPid(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}
