import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { configSchema } from '../src/config/schema.js';
import type { MachineRow } from '../src/db/schema.js';
import { createQemuMachinery, type QemuSession } from '../src/machinery/qemu/index.js';
import { AnalysisPaths } from '../src/storage/layout.js';

/**
 * Helper process of qemu-machine.test.ts: starts a machine, prints its id and waits to be killed, as a
 * nestbox that crashes in the middle of a task.
 */
const log = pino({ level: 'silent' });
const settings = JSON.parse(process.env.NESTBOX_QEMU_TEST_SETTINGS ?? '{}') as Record<string, unknown>;
const machinery = createQemuMachinery(configSchema.parse({ machines: [{ name: 'q1', kind: 'qemu', settings }] }), log);
await machinery.prepare();
const paths = new AnalysisPaths(mkdtempSync(join(tmpdir(), 'nestbox-qemu-crash-')));
paths.create();
const session = (await machinery.start({
  taskId: 8999,
  machine: { name: 'q1' } as MachineRow,
  paths,
  category: 'url',
  url: 'http://example.test/',
  package: '',
  options: {},
  timeoutSeconds: 600,
  enforceTimeout: false,
  memory: false,
  route: 'inetsim',
  clock: new Date().toISOString(),
  log,
})) as QemuSession;
process.stdout.write(`${session.id}\n`);
setInterval(() => undefined, 1 << 30);
