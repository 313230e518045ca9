import type { ChildProcess } from 'node:child_process';
import { chmod, chown, copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Leaf, MachineCgroups } from './cgroups.js';
import { GUEST_INIT_PATH, GUEST_INIT_REAL_PATH } from './guest-init.js';
import type { MachineContext } from './machine-context.js';
import { ensureRegularFiles } from './machine-path.js';
import type { MachineDisk } from './overlay.js';
import { guestEnvironment, spawnSandbox, type SandboxSpec } from './sandbox.js';

/** Where the sample is put inside the machine, as a user would have downloaded it; sandboxes start there. */
export const SAMPLE_DIR = '/tmp';
/** Bound over the parts of /proc the machine may not see. */
const EMPTY_FILE = 'empty';
const EMPTY_FOLDER = 'empty.d';
/** Files of the machine's own that every sandbox binds over the guest's: name in the bind folder -> path inside. */
const BOUND = { init: GUEST_INIT_PATH, 'resolv.conf': '/etc/resolv.conf', hosts: '/etc/hosts', hostname: '/etc/hostname' };
/** The same places without links on the way (/sbin is a link to usr/sbin), where the host checks them. */
const BOUND_REAL_PATHS = Object.values(BOUND).map((path) => (path === GUEST_INIT_PATH ? GUEST_INIT_REAL_PATH : path));

/**
 * The sandboxes of one machine: the files they bind over the guest's (init, name resolution, the covers
 * of /proc) and the specs they start from. The sample's and helpers' sandboxes run on the machine's
 * disk; the display's and screen grabs' on the read-only guest root.
 */
export class MachineSandboxes {
  private netnsPath = '';

  constructor(
    private readonly context: MachineContext,
    private readonly disk: MachineDisk,
    private readonly cgroups: MachineCgroups,
  ) {}

  /** The host id of root inside the machine. */
  get rootId(): number {
    return this.context.hostIds.base;
  }

  /**
   * Writes the bound files beside the upper layer, on the machine's tmpfs: /proc/self/mountinfo shows each
   * bind's source path, and that path then names nothing of the host. Inside they stand where root's own
   * files would, so they are owned by the machine's root, not by nobody. Their places in the machine are
   * made plain files: a bind fails on a link or folder a sample may have left in a reboot task's state.
   * `hostname`: the name the sample's sandbox gets, when not the machine's (Wine's Windows computer name),
   * so that looking it up stays inside the machine.
   */
  async prepare(network: { netnsPath: string; gatewayAddress: string }, hostname = this.context.hostname): Promise<void> {
    this.netnsPath = network.netnsPath;
    const dir = this.boundFilesDir;
    await mkdir(dir);
    await copyFile(this.context.initPath, join(dir, 'init'));
    await chmod(join(dir, 'init'), 0o755);
    await writeFile(join(dir, 'resolv.conf'), `nameserver ${network.gatewayAddress}\n`);
    await writeFile(join(dir, 'hostname'), `${hostname}\n`);
    await writeFile(join(dir, 'hosts'), `127.0.0.1\tlocalhost\n127.0.1.1\t${hostname}\n::1\tlocalhost ip6-localhost ip6-loopback\n`);
    await writeFile(join(dir, EMPTY_FILE), '', { mode: 0o444 });
    await mkdir(join(dir, EMPTY_FOLDER), { mode: 0o555 });
    for (const name of [...Object.keys(BOUND), EMPTY_FILE, EMPTY_FOLDER]) await chown(join(dir, name), this.rootId, this.rootId);
    await ensureRegularFiles(this.disk.root, BOUND_REAL_PATHS, this.rootId);
  }

  /** A sandbox on the machine's disk, in the cgroup leaf given. */
  spawn(leaf: Leaf, argv: string[], overrides: Partial<SandboxSpec> = {}): ChildProcess {
    return spawnSandbox(this.spec(leaf, argv, overrides));
  }

  /** A helper sandbox on the read-only guest root (the display, screen grabs): it cannot see what the sample wrote. */
  spawnOnGuestRoot(argv: string[], overrides: Partial<SandboxSpec> = {}): ChildProcess {
    return this.spawn('support', argv, { root: this.context.guestRoot, rootReadOnly: true, cwd: '/', ...overrides });
  }

  /** The environment a sandbox starts with unless told otherwise. */
  specEnvironment(): Record<string, string> {
    return guestEnvironment(this.context.settings.screenshots);
  }

  private spec(leaf: Leaf, argv: string[], overrides: Partial<SandboxSpec>): SandboxSpec {
    const { settings } = this.context;
    return {
      root: this.disk.root,
      rootReadOnly: false,
      netnsPath: this.netnsPath,
      procsFiles: this.cgroups.procsFiles(leaf),
      hostname: this.context.hostname,
      seccompPath: this.context.seccompPath,
      launcher: this.context.launcher,
      hostIds: this.context.hostIds,
      covers: { emptyFile: join(this.boundFilesDir, EMPTY_FILE), emptyFolder: join(this.boundFilesDir, EMPTY_FOLDER) },
      roBinds: Object.entries(BOUND).map(([name, dest]) => ({ source: join(this.boundFilesDir, name), dest })),
      tmpfs: { '/dev/shm': Math.min(64, settings.disk_mb) * 2 ** 20 },
      env: this.specEnvironment(),
      cwd: SAMPLE_DIR,
      argv,
      ...overrides,
    };
  }

  get boundFilesDir(): string {
    return join(this.disk.tmpfs, 'bind');
  }
}
