import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { form, type TestServer } from './server.js';

// A sample analysed end to end through the API of a test server: submitted, waited for, its report read.

/** Submits a sample through the API; returns its task id. */
export async function submitSample(server: TestServer, name: string, content: string | Uint8Array, fields: Record<string, string> = {}): Promise<number> {
  const { status, body } = await server.json<{ task_id: number }>('/tasks/create/file', {
    method: 'POST',
    body: form({ timeout: '30', ...fields }, [['file', name, content]]),
  });
  assert.equal(status, 200, JSON.stringify(body));
  return body.task_id;
}

/** A task's report once it is reported, with the task's folder. */
export async function reportOf(server: TestServer, id: number, waitMs = 240_000): Promise<any> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const { body: view } = await server.json<{ task: { status: string; errors: string[] } }>(`/tasks/view/${id}`);
    if (view.task.status === 'reported') break;
    assert.ok(!view.task.status.startsWith('failed'), `task ${id}: ${view.task.status} ${view.task.errors.join('; ')}`);
    assert.ok(Date.now() < deadline, `task ${id} still ${view.task.status}`);
    await sleep(500);
  }
  const { body: report } = await server.json<any>(`/tasks/report/${id}`);
  return { ...report, taskDir: join(server.ctx.layout.analyses, String(id)) };
}

/** Submits a sample and returns its report once it is reported, with the task's folder. */
export async function analyseSample(
  server: TestServer,
  name: string,
  content: string | Uint8Array,
  fields: Record<string, string> = {},
  waitMs = 240_000,
): Promise<any> {
  return reportOf(server, await submitSample(server, name, content, fields), waitMs);
}
