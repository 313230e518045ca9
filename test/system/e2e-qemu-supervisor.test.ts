import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assertCuckooShape, assertReverseShell, compileSample, supervisedEvasions } from '../helpers/evasion-samples.js';
import { analyseSample } from '../helpers/sample-through-api.js';
import { COLLECT_GRACE_S } from '../helpers/qemu-timing.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Issue 10's evasions end to end through the API on a qemu machine (TCG, restored from the ready state of
 * nestbox's guest image; its first build takes minutes), against the supervisor the guest's analyzer
 * runs the sample under: the linux machine's tests (e2e-linux-supervisor, e2e-linux-syscalls) with the
 * same samples and the same assertions. One server and one machine for all, in a row: TCG is slow.
 */
const SETTINGS = { memory_mb: 256, run_dir: '/run/nestbox/qemu-supervisor-e2e', collect_grace: COLLECT_GRACE_S, screenshots: false };
/** The first task waits for the image and its ready state to be made. */
const FIRST_TASK_WAIT_MS = 25 * 60_000;
const TASK_WAIT_MS = 5 * 60_000;

describe('end to end on the qemu machine: what the guest supervisor defeats', { timeout: 45 * 60_000 }, () => {
  let server: TestServer;
  const built = mkdtempSync(join(tmpdir(), 'nestbox-qemu-supervisor-e2e-'));
  const compile = (name: string) => compileSample(name, built);
  let waitMs = FIRST_TASK_WAIT_MS;

  before(async () => {
    server = await startTestServer({ machines: [{ name: 'qemu1', kind: 'qemu', settings: SETTINGS }] }, { engine: true, pollMs: 200 });
  });
  after(async () => {
    await server?.close();
    rmSync(built, { recursive: true, force: true });
  });

  /**
   * These samples end on their own long before any timeout: a generous one costs nothing, and spares a
   * guest slowed by a loaded host (the sleeper keeps its own, which it must outwait).
   */
  async function analyse(name: string, content: string | Uint8Array, fields: Record<string, string> = {}): Promise<any> {
    const report = await analyseSample(server, name, content, { timeout: '60', ...fields }, waitMs);
    waitMs = TASK_WAIT_MS;
    assert.equal(report.info.machine.name, 'qemu1');
    return report;
  }

  for (const [title, test] of supervisedEvasions(analyse, compile)) it(title, test);

  it('shows a reverse shell: the socket dup2ed onto stdin, stdout and stderr, then sh -c id', async () => {
    const report = await analyse('reverse-shell', compile('reverse-shell'), { package: 'generic' });
    assertCuckooShape(report, 'ebpf');
    assertReverseShell(report);
    assert.ok(!JSON.stringify(report.behavior).includes('/usr/lib/nestbox'), 'the supervisor hand-off is not the sample');
  });
});
