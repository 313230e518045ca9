import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { analyseSample, submitSample } from '../helpers/sample-through-api.js';
import type { TestServer } from '../helpers/server.js';
import { startWineTestServer } from '../helpers/wine-machine.js';
import { windowsSample } from '../helpers/windows-samples.js';
import { zipSample } from '../helpers/zip-sample.js';

/**
 * Tasks asking for platform windows on a host with no Windows machine, end to end through the API: a PE
 * runs under Wine on the linux machine, and what the API shows of the machines stays as configured.
 */
describe('platform windows under Wine on the linux machine, through the API', { timeout: 1_800_000 }, () => {
  let server: TestServer;
  before(async () => {
    server = await startWineTestServer();
  });
  after(() => server?.close());

  /** Every Windows call of the report (they have a Cuckoo category), across processes. */
  const windowsCalls = (report: any): Array<{ api: string; category: string }> =>
    report.behavior.processes.flatMap((process: any) => process.calls ?? []).filter((call: any) => call.category !== undefined);

  it('runs a PE submitted with platform=windows under Wine, and /machines/list and /cuckoo/status still show a linux machine', async () => {
    const report = await analyseSample(server, 'mutex.exe', readFileSync(windowsSample('mutex', 64)), { platform: 'windows', timeout: '60' });
    assert.equal(report.info.platform, 'windows');
    assert.equal(report.info.machine.name, 'linux1');
    assert.match(readFileSync(join(report.taskDir, 'analysis.log'), 'utf8'), /analysis package: wine/);
    const mutexCalls = windowsCalls(report).filter((call) => call.api === 'CreateMutexW');
    assert.ok(mutexCalls.length > 0, `CreateMutexW among ${JSON.stringify([...new Set(windowsCalls(report).map((call) => call.api))].slice(0, 60))}`);
    assert.equal(mutexCalls[0]!.category, 'synchronisation');
    assert.ok(report.behavior.summary.mutex.includes('Local\\nbx-7f3a-single-instance'), JSON.stringify(report.behavior.summary.mutex));

    const { body: list } = await server.json('/machines/list');
    assert.deepEqual(list.machines.map((machine: any) => [machine.name, machine.platform]), [['linux1', 'linux']]);
    const { body: status } = await server.json('/cuckoo/status');
    assert.equal(status.machines.total, 1);
    assert.equal(status.machines.available, 1);
  });

  it('runs a PE picked from a zip under Wine, unpacked into the Downloads folder', async () => {
    const zip = await zipSample([['readme.txt', 'run the program\n'], ['tools/mutex.exe', readFileSync(windowsSample('mutex', 64))]]);
    const report = await analyseSample(server, 'tools.zip', zip, { timeout: '60' });
    const log = readFileSync(join(report.taskDir, 'analysis.log'), 'utf8');
    assert.match(log, /analysis package: zip/);
    assert.match(log, /unpacked; running \/.*\/Downloads\/tools\/tools\/mutex\.exe \(PE32\+ executable.* with package wine/);
    assert.match(log, /running: .*"\/usr\/lib\/wine\/wine64","C:\\\\users\\\\abecker\\\\Downloads\\\\tools\\\\tools\\\\mutex\.exe"/);
    assert.ok(windowsCalls(report).some((call) => call.api === 'CreateMutexW'), 'the PE made Windows calls');
    assert.ok(report.behavior.summary.mutex.includes('Local\\nbx-7f3a-single-instance'), JSON.stringify(report.behavior.summary.mutex));
  });

  it("runs a 32-bit DLL picked from a tar.gz through rundll32 with its first export, from the file's own type", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nestbox-dll-archive-'));
    try {
      mkdirSync(join(dir, 'lib'));
      copyFileSync(windowsSample('payload-dll', 32), join(dir, 'lib', 'payload-dll.dll'));
      execFileSync('tar', ['-czf', join(dir, 'lib.tar.gz'), '-C', dir, 'lib']);
      const report = await analyseSample(server, 'lib.tar.gz', readFileSync(join(dir, 'lib.tar.gz')), { timeout: '30' });
      const log = readFileSync(join(report.taskDir, 'analysis.log'), 'utf8');
      assert.match(log, /running: .*"\/usr\/lib\/wine\/wine",.*rundll32\.exe","C:\\\\users\\\\abecker\\\\Downloads\\\\lib\\\\lib\\\\payload-dll\.dll,RunPayload"/);
      assert.match(readFileSync(join(report.taskDir, 'files.json'), 'utf8'), /Downloads\/lib\/lib\/payload-ran\.txt/, 'the export ran and wrote its file');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails a platform=windows task whose archive holds no Windows program, saying why', async () => {
    const id = await submitSample(server, 'scripts.zip', await zipSample([['run.sh', '#!/bin/sh\necho hello\n']]), { platform: 'windows', timeout: '30' });
    let task: any;
    for (let i = 0; i < 240; i++) {
      task = (await server.json(`/tasks/view/${id}`)).body.task;
      if (task.status.startsWith('failed') || task.status === 'reported') break;
      await sleep(500);
    }
    assert.equal(task.status, 'failed_analysis');
    assert.match(task.errors.join('; '), /the task asks for platform "windows", which a linux machine runs under Wine, for Windows programs only; \/tmp\/unpacked\/run\.sh is none \(POSIX shell script/);
  });
});
