import type { Logger } from 'pino';
import type { Config } from '../../config/schema.js';
import { unavailable } from '../../errors.js';
import { MachineContexts } from '../machine-contexts.js';
import { runCommand } from '../host/command.js';
import type { CreateTaskNetwork } from '../host/contracts.js';
import { cleanupStaleNetworks, createTaskNetwork, SpareNetwork } from '../host/network/index.js';
import type { AnalysisRequest, Machinery, MachineSession } from '../types.js';
import { checkCuckooCwd } from './cuckoo-analyzer-zip.js';
import { prepareQemuMachine } from './prepare.js';
import { QemuSession, type QemuMachineContext } from './session.js';
import { parseQemuSettings, type QemuSettings } from './settings.js';
import { cleanupStaleQemu } from './stale.js';

export { buildImage, DEFAULT_RECIPE } from './image-builder.js';
export { parseQemuSettings, qemuSettingsSchema, type QemuSettings } from './settings.js';
export { QemuSession, type QemuMachineContext, type StartTimings } from './session.js';
export { prepareQemuMachine } from './prepare.js';

/** Parts the machinery is composed of. */
export interface QemuMachineryParts {
  createTaskNetwork: CreateTaskNetwork;
}

const REQUIRED_TOOLS = ['qemu-system-x86_64', 'qemu-img', 'ip', 'setpriv'];

/**
 * The `qemu` machinery: each task runs in a new QEMU restored in a fraction of a second from a saved,
 * booted state of its image, on a throw-away disk overlay, behind its own task network (the same as the
 * linux machinery's). See session.ts for one machine's life and snapshot.ts for the ready state.
 */
export function createQemuMachinery(config: Config, log: Logger, parts: Partial<QemuMachineryParts> = {}): Machinery {
  const machineLog = log.child({ machinery: 'qemu' });
  const qemuMachines = () => config.machines.filter((machine) => machine.kind === 'qemu');
  const settingsOf = (name: string): QemuSettings =>
    parseQemuSettings(config.machines.find((machine) => machine.name === name)?.settings ?? {}, name);

  const contexts = new MachineContexts<QemuMachineContext>(async (name) => {
    await checkTools();
    const machine = config.machines.find((candidate) => candidate.name === name);
    if (machine?.platform === 'windows' && settingsOf(name).analyzer === 'nestbox') checkCuckooCwd(settingsOf(name).cuckoo_cwd, name);
    const context = await prepareQemuMachine(name, settingsOf(name), {
      log: machineLog,
      internetInterface: config.routing.internet_interface,
      archives: config.archives,
      droppedFileLimits: config.dropped_files,
      createTaskNetwork: parts.createTaskNetwork ?? createTaskNetwork,
    });
    // The first task's network is made ahead (for the default route); each next one while the machine idles.
    const spareNetwork = parts.createTaskNetwork ? undefined : SpareNetwork.startedFor(config.routing.default_route, machineLog);
    return spareNetwork ? { ...context, spareNetwork } : context;
  });

  return {
    kind: 'qemu',
    manager: 'QEMU',
    async prepare() {
      for (const machine of qemuMachines()) await contexts.get(machine.name);
    },
    async start(request: AnalysisRequest): Promise<MachineSession> {
      return QemuSession.start(await contexts.get(request.machine.name), request);
    },
    async close() {
      for (const context of contexts.all()) await context.then((ready) => ready.spareNetwork?.close()).catch(() => undefined);
    },
    async cleanupStale() {
      const runDirs = new Set(qemuMachines().map((machine) => settingsOf(machine.name).run_dir));
      for (const runDir of runDirs) await cleanupStaleQemu(runDir, machineLog);
      await cleanupStaleNetworks(machineLog);
    },
  };
}

async function checkTools(): Promise<void> {
  const missing: string[] = [];
  for (const tool of REQUIRED_TOOLS) {
    if ((await runCommand(['sh', '-c', `command -v ${tool}`])).code !== 0) missing.push(tool);
  }
  if (missing.length > 0) {
    throw unavailable(`the qemu machinery needs ${missing.join(', ')} (scripts/setup.sh installs them)`, { context: { missing } });
  }
  if (process.getuid?.() !== 0) throw unavailable('the qemu machinery must run as root (tap devices, network namespaces)');
}
