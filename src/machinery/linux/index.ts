import { existsSync } from 'node:fs';
import { readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../../config/schema.js';
import { NestboxError, unavailable } from '../../errors.js';
import { archiveLimits } from '../../storage/archives.js';
import { MachineContexts } from '../machine-contexts.js';
import type { AnalysisRequest, Machinery, MachineSession } from '../types.js';
import { detectCgroupLayout, listMachineGroups, MachineCgroups, CGROUP_PREFIX } from './cgroups.js';
import { runCommand } from '../host/command.js';
import type { CreateTaskNetwork, Tracer } from '../host/contracts.js';
import { ensureGuestRoot } from './guest-root.js';
import { checkRangeIsFree, machineIdRange } from './host-ids.js';
import { ensureNativeProgram, MACHINE_INIT, SUPERVISOR, USERNS_EXEC } from '../host/native-programs.js';
import { ensureTraversable, makeRunDir } from './run-dir.js';
import { cleanupStaleNetworks, createTaskNetwork, SpareNetwork } from '../host/network/index.js';
import { createTracer, type BehaviourTracer } from '../host/tracer/index.js';
import { isMachineId } from '../host/machine-id.js';
import { MachineDisk, mountedMachineDisks } from './overlay.js';
import { isClaimed } from '../host/ownership.js';
import { sandboxSeccompProgram } from './seccomp.js';
import type { MachineContext } from './machine-context.js';
import { LinuxSession } from './session.js';
import { parseLinuxSettings, type LinuxSettings } from './settings.js';
import { CONVERT } from './screenshots.js';

export { ensureGuestRoot, guestRootPlan } from './guest-root.js';
export { parseLinuxSettings, linuxSettingsSchema, type LinuxSettings } from './settings.js';
export { LinuxSession } from './session.js';
export { machineId } from '../host/machine-id.js';

/** Parts the machinery is composed of; tests may hand in stand-ins for parts not under test. */
export interface LinuxMachineryParts {
  createTaskNetwork: CreateTaskNetwork;
  createTracer: (log: Logger) => Tracer;
}

const SECCOMP_FILE = 'seccomp.bpf';
const REQUIRED_TOOLS = ['bwrap', 'nsenter', 'unshare', 'mount', 'umount', 'tar', 'file', 'gcc', 'debootstrap'];

/**
 * The `linux` machinery: each task runs in a fresh sandbox of Linux namespaces on a dedicated Debian
 * guest root, behind its own task network, traced by the behaviour tracer. See session.ts for one
 * machine's life and platform-notes.md for what the host offers.
 */
export interface LinuxMachinery extends Machinery {
  /** Ends what the machinery keeps ready between tasks (the tracer's waiting eBPF program, the spare network). */
  close(): Promise<void>;
}

export function createLinuxMachinery(config: Config, log: Logger, parts: Partial<LinuxMachineryParts> = {}): LinuxMachinery {
  const machineLog = log.child({ machinery: 'linux' });

  const settingsOf = (name: string): LinuxSettings => {
    const machine = config.machines.find((candidate) => candidate.name === name);
    return parseLinuxSettings(machine?.settings ?? {}, name);
  };

  const contexts = new MachineContexts<MachineContext>((name) => prepareMachine(name, settingsOf(name), config, machineLog, parts));

  const linuxMachines = () => config.machines.filter((machine) => machine.kind === 'linux');

  return {
    kind: 'linux',
    manager: 'Linux',
    async prepare() {
      for (const machine of linuxMachines()) await contexts.get(machine.name);
    },
    async start(request: AnalysisRequest): Promise<MachineSession> {
      const context = await contexts.get(request.machine.name);
      return LinuxSession.start(context, request);
    },
    async close() {
      for (const context of contexts.all()) {
        const tracer = await context.then((ready) => ready.tracer).catch(() => undefined);
        if (tracer && 'close' in tracer) await (tracer as BehaviourTracer).close();
        await context.then((ready) => ready.spareNetwork?.close()).catch(() => undefined);
      }
    },
    async cleanupStale() {
      const runDirs = new Set(linuxMachines().map((machine) => settingsOf(machine.name).run_dir));
      for (const runDir of runDirs) await cleanupStaleMachines(runDir, machineLog);
      await cleanupStaleNetworks(machineLog);
    },
  };
}

async function prepareMachine(
  name: string,
  settings: LinuxSettings,
  config: Config,
  log: Logger,
  parts: Partial<LinuxMachineryParts>,
): Promise<MachineContext> {
  await checkTools(settings);
  const cgroupLayout = detectCgroupLayout();
  const hostIds = machineIdRange(settings.host_id_base);
  await checkRangeIsFree(hostIds);
  const guestRoot = await ensureGuestRoot(settings, log);
  const initPath = await ensureNativeProgram(MACHINE_INIT, settings.guest_root_dir);
  const launcher = await ensureNativeProgram(USERNS_EXEC, settings.guest_root_dir);
  const supervisorPath = await ensureNativeProgram(SUPERVISOR, settings.guest_root_dir);
  await makeRunDir(settings.run_dir);
  // The sandbox's root is an unprivileged host id: it must be able to reach its root to bind it.
  await ensureTraversable(guestRoot);
  const seccompPath = join(settings.run_dir, SECCOMP_FILE);
  await writeFile(seccompPath, sandboxSeccompProgram());
  // Nothing is awaited after this point: what is made ahead below belongs to a context that is returned.
  const prefer = settings.tracer === 'strace' ? 'strace' : undefined;
  const tracer = settings.tracing ? (parts.createTracer ?? ((tracerLog: Logger) => createTracer(tracerLog, { prefer })))(log) : undefined;
  // The eBPF tracer can compile and attach its program ahead of the first task, so that start costs milliseconds.
  if (tracer && 'prepare' in tracer) void (tracer as BehaviourTracer).prepare();
  // The first task's network is made ahead too (for the default route); each next one while the machine idles.
  const spareNetwork = parts.createTaskNetwork ? undefined : SpareNetwork.startedFor(config.routing.default_route, log);
  const machine = config.machines.find((candidate) => candidate.name === name);
  log.info({ machine: name, guestRoot, cgroups: cgroupLayout.kind }, 'linux machine ready');
  return {
    settings,
    guestRoot,
    initPath,
    seccompPath,
    supervisorPath,
    launcher,
    hostIds,
    cgroupLayout,
    hostname: machine?.label ?? name,
    internetInterface: config.routing.internet_interface,
    archivePasswords: config.archives.passwords,
    archiveLimits: archiveLimits(config.archives),
    droppedFileLimits: config.dropped_files,
    createTaskNetwork: parts.createTaskNetwork ?? createTaskNetwork,
    ...(spareNetwork ? { spareNetwork } : {}),
    ...(tracer ? { tracer } : {}),
  };
}

async function checkTools(settings: LinuxSettings): Promise<void> {
  const missing: string[] = [];
  for (const tool of REQUIRED_TOOLS) {
    const found = await runCommand(['sh', '-c', `command -v ${tool}`]);
    if (found.code !== 0) missing.push(tool);
  }
  if (settings.screenshots && !existsSync(CONVERT)) missing.push(CONVERT);
  if (missing.length > 0) {
    throw unavailable(`the linux machinery needs ${missing.join(', ')} (scripts/setup.sh installs them)`, { context: { missing } });
  }
  if (process.getuid?.() !== 0) throw unavailable('the linux machinery must run as root (namespaces, mounts, cgroups)');
}

/**
 * Removes what machines of dead nestbox processes left behind: their processes and cgroups, their disk
 * mounts and run folders. Machines whose owner still runs are left alone.
 */
export async function cleanupStaleMachines(runDir: string, log: Logger): Promise<string[]> {
  const layout = detectCgroupLayout();
  // Each machine's folder (which holds its owner record), found from the run folder, its mounts or its cgroups.
  const folders = new Map<string, string | undefined>();
  for (const id of await readdir(runDir).catch(() => [])) if (isMachineId(id)) folders.set(id, join(runDir, id));
  for (const [id, dir] of mountedMachineDisks(isMachineId)) if (!folders.has(id)) folders.set(id, dir);
  for (const group of await listMachineGroups(layout)) {
    const id = group.slice(CGROUP_PREFIX.length);
    if (!folders.has(id)) folders.set(id, undefined);
  }
  const stale: string[] = [];
  for (const [id, dir] of folders) {
    if (dir && (await isClaimed(dir))) continue;
    stale.push(id);
    try {
      await new MachineCgroups(layout, id).remove();
      await new MachineDisk(dir ?? join(runDir, id)).unmount();
      if (dir) await rm(dir, { recursive: true, force: true });
    } catch (error) {
      throw new NestboxError('internal', `cannot clean up stale machine ${id}: ${(error as Error).message}`, { cause: error, context: { id } });
    }
  }
  if (stale.length > 0) log.warn({ machines: stale }, 'removed stale linux machines');
  return stale;
}
