import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { analyseSample } from '../helpers/sample-through-api.js';
import type { TestServer } from '../helpers/server.js';
import { lightPixels, startWineTestServer } from '../helpers/wine-machine.js';
import { windowsSample, type WindowsBits, type WindowsSampleName } from '../helpers/windows-samples.js';

/**
 * Issue 14's "how we will know": each of its Windows samples (mingw-w64, test/fixtures/windows/) analysed
 * end to end through the API on the linux machine under Wine, with the fake internet; each report holds
 * the expected Windows calls, behavior.summary keys, signatures, and for the GUI program a screenshot of
 * its window.
 */
const DOWNLOADS = 'C:\\users\\abecker\\Downloads';

/** Every Windows call of the report, across processes. */
function callsOf(report: any): Array<{ api: string; arguments: Record<string, unknown>; status: boolean; return_value: number }> {
  return report.behavior.processes.flatMap((process: any) => process.calls ?? []).filter((call: any) => call.category !== undefined);
}

function apis(report: any): Set<string> {
  return new Set(callsOf(report).map((call) => call.api));
}

function signatures(report: any): string[] {
  return report.signatures.map((signature: any) => signature.name as string);
}

function assertHas(set: Set<string> | string[], wanted: string[], what: string): void {
  const have = new Set(set);
  const missing = wanted.filter((entry) => !have.has(entry));
  assert.deepEqual(missing, [], `${what} missing ${JSON.stringify(missing)}; present: ${JSON.stringify([...have].slice(0, 80))}`);
}

function summaryHas(report: any, key: string, pattern: RegExp): void {
  const values = (report.behavior.summary[key] ?? []) as string[];
  assert.ok(values.some((value) => pattern.test(value)), `summary.${key} holds ${pattern}: ${JSON.stringify(values.slice(0, 30))}`);
}

describe("issue 14's Windows samples under Wine, through the API", { timeout: 3_600_000 }, () => {
  let server: TestServer;
  before(async () => {
    server = await startWineTestServer();
  });
  after(() => server?.close());

  const analyse = (name: WindowsSampleName, bits: WindowsBits, fields: Record<string, string> = {}) => {
    const file = windowsSample(name, bits);
    return analyseSample(server, file.split('/').pop()!, readFileSync(file), { timeout: '60', ...fields });
  };

  it('dropper: downloads from the fake internet and runs what it wrote', async () => {
    const report = await analyse('dropper', 64);
    assertHas(apis(report), ['URLDownloadToFileW', 'CreateProcessW'], 'calls');
    summaryHas(report, 'resolves_host', /^updates\.nestbox\.test$/);
    summaryHas(report, 'file_created', /Downloads\\update\.exe$/i);
    assertHas(signatures(report), ['win_download_and_execute'], 'signatures');
  });

  for (const bits of [64, 32] as const) {
    it(`persistence (${bits}-bit): a Run value and a service`, async () => {
      const report = await analyse('persistence', bits);
      assertHas(apis(report), ['RegCreateKeyExW', 'RegSetValueExW', 'OpenSCManagerW', 'CreateServiceW'], 'calls');
      summaryHas(report, 'regkey_written', /^HKEY_CURRENT_USER\\Software\\Microsoft\\Windows\\CurrentVersion\\Run\\NestboxUpdater$/i);
      summaryHas(report, 'regkey_written', /^HKEY_LOCAL_MACHINE\\System\\CurrentControlSet\\Services\\NestboxUpdate\\/i);
      assertHas(signatures(report), ['win_persistence_run_key', 'win_persistence_service'], 'signatures');
    });
  }

  it('inject: writes into a child it started and runs a thread there', async () => {
    const report = await analyse('inject', 64);
    assertHas(apis(report), ['CreateProcessW', 'VirtualAllocEx', 'WriteProcessMemory', 'CreateRemoteThread'], 'calls');
    summaryHas(report, 'command_line', /inject\.exe"? child$/);
    assertHas(signatures(report), ['win_process_injection'], 'signatures');
  });

  it('mutex: a single-instance check', async () => {
    const report = await analyse('mutex', 64);
    assertHas(apis(report), ['CreateMutexW'], 'calls');
    summaryHas(report, 'mutex', /^Local\\nbx-7f3a-single-instance$/);
    assert.ok(report.behavior.processes.length >= 2, 'the second copy ran');
  });

  it('ransom: encrypts its files, renames them and asks vssadmin to delete the shadow copies', async () => {
    const report = await analyse('ransom', 64);
    assertHas(apis(report), ['FindFirstFileW', 'MoveFileExW', 'CreateProcessW'], 'calls');
    summaryHas(report, 'file_written', /Downloads\\files\\.+/i);
    summaryHas(report, 'command_line', /vssadmin delete shadows \/all \/quiet/i);
    assertHas(signatures(report), ['win_ransomware_file_renames', 'win_shadow_copy_deletion'], 'signatures');
  });

  it('payload-dll: rundll32 runs its export', async () => {
    const report = await analyse('payload-dll', 32);
    summaryHas(report, 'mutex', /^Local\\nbx-dll-payload$/);
    summaryHas(report, 'file_created', /Downloads\\payload-ran\.txt$/i);
    summaryHas(report, 'command_line', new RegExp(`rundll32\\.exe.*${DOWNLOADS.replace(/\\/g, '\\\\')}\\\\payload-dll\\.dll,RunPayload`, 'i'));
  });

  it('evade-wine: finds Wine and exits', async () => {
    const report = await analyse('evade-wine', 64);
    assertHas(apis(report), ['IsDebuggerPresent', 'RegOpenKeyExW', 'GetProcAddress'], 'calls');
    assertHas(signatures(report), ['win_antidebug', 'win_antivm', 'win_wine_detection'], 'signatures');
    assert.doesNotMatch(JSON.stringify(report.behavior.summary.file_created ?? []), /payload-ran/);
  });

  it('gui: opens a window, seen on a screenshot', async () => {
    const report = await analyse('gui', 64);
    assertHas(apis(report), ['CreateWindowExW'], 'calls');
    const shots = readdirSync(join(report.taskDir, 'shots')).filter((name) => /^\d{4}\.jpg$/.test(name));
    const lightest = Math.max(0, ...shots.map((name) => lightPixels(join(report.taskDir, 'shots', name))));
    assert.ok(lightest > 472 * 213 * 0.8, `a screenshot shows the window (${lightest} light pixels in ${shots.length} screenshots)`);
    assert.deepEqual(
      report.screenshots.map((shot: { path: string }) => shot.path).sort(),
      shots.map((name) => join(report.taskDir, 'shots', name)).sort(),
      'the report lists its screenshots',
    );
  });
});
