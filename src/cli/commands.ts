import { openAsBlob } from 'node:fs';
import { basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiClient, type ClientOptions } from './client.js';
import { type StatusAnswer, statusText } from './status-text.js';

interface TaskSummary {
  id: number;
  status: string;
  category: string;
  target: string;
  added_on: string;
  completed_on: string | null;
  errors: string[];
}

const FINAL_STATES = new Set(['reported', 'failed_analysis', 'failed_processing', 'failed_reporting', 'recovered']);

/** The cluster's tasks, machines and nodes as text; with --json, /cuckoo/status as it answered. */
export async function statusCommand(options: ClientOptions & { json?: boolean }): Promise<void> {
  const status = await new ApiClient(options).json<StatusAnswer>('/cuckoo/status');
  if (options.json) print(status);
  else process.stdout.write(statusText(status));
}

export async function listCommand(options: ClientOptions & { limit?: string; status?: string }): Promise<void> {
  const client = new ApiClient(options);
  const query = options.status ? `?status=${encodeURIComponent(options.status)}` : '';
  const path = options.limit ? `/tasks/list/${Number(options.limit)}${query}` : `/tasks/list${query}`;
  const { tasks } = await client.json<{ tasks: TaskSummary[] }>(path);
  for (const task of tasks) {
    process.stdout.write(`${String(task.id).padStart(6)}  ${task.status.padEnd(17)} ${task.added_on}  ${task.category.padEnd(4)} ${task.target}\n`);
  }
}

export interface SubmitOptions extends ClientOptions {
  package?: string;
  timeout?: string;
  priority?: string;
  options?: string;
  machine?: string;
  platform?: string;
  tags?: string;
  memory?: boolean;
  enforceTimeout?: boolean;
  wait?: boolean;
}

/** Submits a file or URL; with --wait, follows the task until it ends and prints its summary. */
export async function submitCommand(target: string, options: SubmitOptions): Promise<void> {
  const client = new ApiClient(options);
  const isUrl = /^https?:\/\//i.test(target);
  const form = new FormData();
  if (isUrl) form.append('url', target);
  else form.append('file', await openAsBlob(target), basename(target));
  const fields: Record<string, string | undefined> = {
    package: options.package,
    timeout: options.timeout,
    priority: options.priority,
    options: options.options,
    machine: options.machine,
    platform: options.platform,
    tags: options.tags,
    memory: options.memory ? 'true' : undefined,
    enforce_timeout: options.enforceTimeout ? 'true' : undefined,
  };
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) form.append(key, value);
  const { task_id } = await client.json<{ task_id: number }>(isUrl ? '/tasks/create/url' : '/tasks/create/file', {
    method: 'POST',
    body: form,
  });
  process.stdout.write(`task ${task_id}\n`);
  if (!options.wait) return;
  const task = await waitForTask(client, task_id);
  process.stdout.write(`task ${task.id}: ${task.status}\n`);
  for (const error of task.errors) process.stdout.write(`  error: ${error}\n`);
  if (task.status === 'reported') {
    const summary = await client.json<{ info?: { score?: number }; signatures?: Array<{ name: string; severity: number; description: string }> }>(
      `/tasks/report/${task.id}`,
    );
    process.stdout.write(`score: ${summary.info?.score ?? 'n/a'}\n`);
    for (const signature of summary.signatures ?? []) {
      process.stdout.write(`  [${signature.severity}] ${signature.name}: ${signature.description}\n`);
    }
  }
  if (task.status !== 'reported') process.exitCode = 1;
}

async function waitForTask(client: ApiClient, id: number): Promise<TaskSummary> {
  for (;;) {
    const { task } = await client.json<{ task: TaskSummary }>(`/tasks/view/${id}`);
    if (FINAL_STATES.has(task.status)) return task;
    await sleep(1000);
  }
}

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
