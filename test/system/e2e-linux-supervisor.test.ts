import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { analyseSample, compileSample, supervisedEvasions } from '../helpers/evasion-samples.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Issue 10's evasions end to end through the API on the linux machine, against the sample supervisor:
 * sleeping past the timeout, fileless execution, a self-copy that hides and deletes itself, a debugger
 * check, and a process too short-lived for the end-of-run memory dumps. The qemu machine runs the same
 * cases (e2e-qemu-supervisor.test.ts).
 */
const built = mkdtempSync(join(tmpdir(), 'nestbox-supervisor-e2e-'));
const compile = (name: string) => compileSample(name, built);

describe('end to end on the Linux machine: what the supervisor defeats', { timeout: 900_000 }, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ machines: [{ name: 'linux1', settings: { screenshots: false } }] }, { engine: true, pollMs: 200 });
  });
  after(() => server.close());

  const analyse = (name: string, content: string | Uint8Array, fields: Record<string, string> = {}) => analyseSample(server, name, content, fields);
  for (const [title, test] of supervisedEvasions(analyse, compile)) it(title, test);
});
