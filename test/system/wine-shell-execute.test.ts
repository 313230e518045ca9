import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { analyseSample } from '../helpers/sample-through-api.js';
import type { TestServer } from '../helpers/server.js';
import { startWineTestServer } from '../helpers/wine-machine.js';
import { windowsSample } from '../helpers/windows-samples.js';

/**
 * A program started through ShellExecuteExW (test/fixtures/windows/shell-execute.c) under Wine, end to end
 * through the API: the report's ShellExecuteExW call shows the file, parameters and verb of its
 * SHELLEXECUTEINFOW, which relay alone gives only as a pointer, and the process it started.
 */
const PARAMETERS = '/c echo started by ShellExecuteExW> shell-execute-ran.txt';

describe('ShellExecuteExW under Wine, through the API', { timeout: 900_000 }, () => {
  let server: TestServer;
  before(async () => {
    server = await startWineTestServer();
  });
  after(() => server?.close());

  for (const bits of [64, 32] as const) {
    it(`${bits}-bit: the call's file, parameters and verb, its command line and the cmd.exe it started`, async () => {
      const file = windowsSample('shell-execute', bits);
      const report = await analyseSample(server, 'shell-execute.exe', readFileSync(file), { timeout: '60' });
      const processes: any[] = report.behavior.processes;
      const owner = processes.find((process) => (process.calls ?? []).some((call: any) => call.api === 'ShellExecuteExW'));
      assert.ok(owner, `a process called ShellExecuteExW: ${JSON.stringify(processes.map((process) => process.process_name))}`);
      const call = owner.calls.find((entry: any) => entry.api === 'ShellExecuteExW');
      assert.equal(call.status, true);
      assert.equal(call.arguments.lpVerb, 'open');
      assert.equal(call.arguments.lpFile, 'cmd.exe');
      assert.equal(call.arguments.lpParameters, PARAMETERS);
      assert.ok(report.behavior.summary.command_line.includes(`cmd.exe ${PARAMETERS}`), JSON.stringify(report.behavior.summary.command_line));
      const started = processes.find((process) => /^cmd\.exe/i.test(process.process_name ?? ''));
      assert.ok(started, `cmd.exe is among the processes: ${JSON.stringify(processes.map((process) => process.process_name))}`);
      assert.equal(started.ppid === owner.pid || processes.some((middle) => middle.ppid === owner.pid && started.ppid === middle.pid), true, 'cmd.exe descends from the sample');
      assert.ok(report.behavior.summary.file_created?.some((path: string) => /shell-execute-ran\.txt$/i.test(path)) ||
        report.dropped?.some((entry: any) => /shell-execute-ran\.txt$/i.test(entry.name ?? entry.filepath ?? '')), 'cmd.exe wrote its file');
    });
  }
});
