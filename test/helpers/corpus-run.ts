import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CorpusSample } from './corpus.js';
import { form, type TestServer } from './server.js';

/** What one corpus sample's analysis ended with, as the API reports it. */
export interface SampleOutcome {
  sample: CorpusSample;
  taskId: number;
  /** The task's final status: `reported`, or a failure. */
  status: string;
  errors: string[];
  score: number;
  signatures: Array<{ name: string; severity: number }>;
  /** From submission to the report being readable. */
  seconds: number;
}

interface TaskView {
  task: { status: string; errors: string[] };
}
interface ReportView {
  info: { score: number };
  signatures: Array<{ name: string; severity: number }>;
}

/**
 * Submits every sample through `/tasks/create/file` (with its label's package, options and timeout), then
 * waits for each report. The scheduler runs them on whichever machines the server has, as many at once.
 */
export async function analyseCorpus(
  server: TestServer,
  samples: readonly CorpusSample[],
  options: { deadlineMs: number; onOutcome?: (outcome: SampleOutcome) => void },
): Promise<SampleOutcome[]> {
  const submitted = await Promise.all(samples.map(async (sample) => ({ sample, taskId: await submit(server, sample), at: Date.now() })));
  const deadline = Date.now() + options.deadlineMs;
  return Promise.all(
    submitted.map(async ({ sample, taskId, at }) => {
      const outcome = await awaitOutcome(server, sample, taskId, at, deadline);
      options.onOutcome?.(outcome);
      return outcome;
    }),
  );
}

async function submit(server: TestServer, sample: CorpusSample): Promise<number> {
  const { label } = sample;
  const fields: Record<string, string> = { timeout: String(label.timeout ?? 60) };
  if (label.package) fields.package = label.package;
  if (label.options) fields.options = label.options;
  const { status, body } = await server.json<{ task_id: number }>('/tasks/create/file', {
    method: 'POST',
    body: form(fields, [['file', sample.fileName, readFileSync(sample.path)]]),
  });
  if (status !== 200) throw new Error(`${sample.id}: /tasks/create/file answered ${status}: ${JSON.stringify(body)}`);
  return body.task_id;
}

async function awaitOutcome(server: TestServer, sample: CorpusSample, taskId: number, submittedAt: number, deadline: number): Promise<SampleOutcome> {
  const ended = (status: string, errors: string[], report?: ReportView): SampleOutcome => ({
    sample,
    taskId,
    status,
    errors,
    score: report?.info.score ?? 0,
    signatures: (report?.signatures ?? []).map(({ name, severity }) => ({ name, severity })),
    seconds: (Date.now() - submittedAt) / 1000,
  });
  for (;;) {
    const { body } = await server.json<TaskView>(`/tasks/view/${taskId}`);
    const { status, errors } = body.task;
    if (status === 'reported') {
      const { body: report } = await server.json<ReportView>(`/tasks/report/${taskId}`);
      return ended(status, errors, report);
    }
    if (status.startsWith('failed')) return ended(status, errors);
    if (Date.now() > deadline) return ended(`still ${status} at the deadline`, errors);
    await sleep(500);
  }
}
