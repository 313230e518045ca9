import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pino } from 'pino';
import { choosePackage, packageCatalogue, PACKAGES, PACKAGES_WITHOUT_WINE } from '../../src/analysis/packages/index.js';
import { isNestboxError } from '../../src/errors.js';
import { guestPackage } from '../../src/machinery/qemu/guest-analyzer.js';
import { fileType } from '../../src/machinery/host/file-type.js';
import type { AnalysisRequest } from '../../src/machinery/types.js';
import { AnalysisPaths } from '../../src/storage/layout.js';
import { analysisRequest } from '../helpers/analysis-request.js';
import { windowsSample } from '../helpers/windows-samples.js';

/**
 * A qemu Linux guest has no Wine: its analyzer is not offered the wine package, and a Windows program sent
 * to it is refused with the reason before the guest is started, instead of being run as something else.
 * The files are real (a mingw-w64 PE, an ELF), typed by libmagic as the machine types them.
 */
const scratch = mkdtempSync(join(tmpdir(), 'nestbox-guest-packages-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

function request(fields: Partial<AnalysisRequest>): AnalysisRequest {
  return analysisRequest('qemu1', { taskId: 1, paths: new AnalysisPaths(scratch), log: pino({ level: 'silent' }), ...fields });
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => assert.fail('refused'),
    (reason: unknown) => reason,
  );
  assert.ok(isNestboxError(error, 'invalid_input'), `invalid input: ${String(error)}`);
  return error.message;
}

describe("a qemu Linux guest's packages", () => {
  it("leave out wine, and only wine, from the catalogue the guest's analyzer is given", () => {
    const names = packageCatalogue(PACKAGES_WITHOUT_WINE).map((spec) => spec.name);
    assert.deepEqual(names, PACKAGES.map((entry) => entry.name).filter((name) => name !== 'wine'));
    assert.ok(packageCatalogue().some((spec) => spec.name === 'wine'), 'the linux machine keeps it');
  });

  for (const bits of [64, 32] as const) {
    it(`refuse a ${bits}-bit Windows program with the reason, where the linux machine runs it under Wine`, async () => {
      const samplePath = windowsSample('mutex', bits);
      const message = await refusal(guestPackage(request({ samplePath })));
      assert.match(message, /does not offer the analysis package "wine"/);
      assert.match(message, /Windows programs run under Wine on linux machines/);
      const target = { fileName: 'mutex.exe', fileType: await fileType(samplePath) };
      assert.equal(choosePackage({ requested: '', category: 'file', target, reboot: false }).name, 'wine');
    });
  }

  it('refuse the wine package by name or alias, whatever the file', async () => {
    for (const name of ['wine', 'exe', 'rundll32']) {
      assert.match(await refusal(guestPackage(request({ samplePath: '/usr/bin/true', package: name }))), /"wine".*no Wine/);
    }
  });

  it('run everything else as before: an ELF, a URL, a reboot', async () => {
    assert.equal((await guestPackage(request({ samplePath: '/usr/bin/true' }))).name, 'elf');
    assert.equal((await guestPackage(request({ category: 'url', url: 'http://example.test/' }))).name, 'url');
    assert.equal((await guestPackage(request({ rebootFrom: new AnalysisPaths(join(scratch, 'original')) }))).name, 'reboot');
  });
});
