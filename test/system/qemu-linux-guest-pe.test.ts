import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { configSchema } from '../../src/config/schema.js';
import { isNestboxError } from '../../src/errors.js';
import { createQemuMachinery } from '../../src/machinery/qemu/index.js';
import type { QemuSettings } from '../../src/machinery/qemu/settings.js';
import type { Machinery } from '../../src/machinery/types.js';
import { AnalysisPaths } from '../../src/storage/layout.js';
import { analysisRequest } from '../helpers/analysis-request.js';
import { windowsSample } from '../helpers/windows-samples.js';
import { zipSample } from '../helpers/zip-sample.js';

/**
 * A Windows program sent to a qemu machine with nestbox's Linux guest, through the Machinery interface on
 * this host (the guest image built once into /var/lib/nestbox/images and reused): the guest has no Wine,
 * so the task is refused with the reason when its session starts, before a guest is restored, and nothing
 * of the session is left. So is an archive whose file the guest would pick is a Windows program.
 */
const RUN_DIR = '/run/nestbox/qemu-pe-test';
const settings: Partial<QemuSettings> = { memory_mb: 256, run_dir: RUN_DIR };
const workDir = mkdtempSync(join(tmpdir(), 'nestbox-qemu-pe-'));
let machinery: Machinery;

/** QEMU processes started for this test's run folder: other test files start and stop guests of their own meanwhile. */
function qemuProcessesOfThisTest(): string[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const isQemu = readFileSync(`/proc/${pid}/comm`, 'utf8').startsWith('nbq-');
        return isQemu && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(`${RUN_DIR}/`);
      } catch {
        return false;
      }
    });
}

describe('a Windows program on a qemu Linux guest', { timeout: 30 * 60_000 }, () => {
  before(async () => {
    machinery = createQemuMachinery(configSchema.parse({ machines: [{ name: 'q1', kind: 'qemu', settings }] }), pino({ level: 'silent' }));
    await machinery.prepare();
  });
  after(async () => {
    await machinery?.close?.();
    rmSync(workDir, { recursive: true, force: true });
  });

  /** Starts a session for the sample; it must be refused as invalid input before any guest runs. */
  async function refusal(taskId: number, samplePath: string): Promise<Error> {
    const paths = new AnalysisPaths(join(workDir, `task-${taskId}`));
    paths.create();
    const request = analysisRequest('q1', { taskId, paths, samplePath, log: pino({ level: 'silent' }) });
    const error = await machinery.start(request).then(
      () => assert.fail('the session started'),
      (reason: unknown) => reason,
    );
    assert.ok(isNestboxError(error, 'invalid_input'), String(error));
    assert.deepEqual(qemuProcessesOfThisTest(), [], 'no guest was started');
    assert.deepEqual(existsSync(RUN_DIR) ? readdirSync(RUN_DIR).filter((name) => !name.startsWith('.')) : [], [], 'no run folder is left');
    return error;
  }

  it('is refused when its session starts, saying that Windows programs run under Wine on linux machines', async () => {
    const error = await refusal(9100, windowsSample('dropper', 64));
    assert.match(error.message, /does not offer the analysis package "wine": Windows programs run under Wine on linux machines/);
  });

  it('in an archive, is refused too when it is the file the guest would run', async () => {
    const zip = join(workDir, 'dropper.zip');
    writeFileSync(zip, await zipSample([['dropper.exe', readFileSync(windowsSample('dropper', 64))]]));
    const error = await refusal(9101, zip);
    assert.match(error.message, /^the archive's file "dropper\.exe" is a Windows program, which this machine cannot run: Windows programs run under Wine on linux machines/);
  });
});
