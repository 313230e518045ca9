import { type ChildProcess, spawn, type StdioOptions } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import type { Stream } from 'node:stream';
import { GUEST_INIT_PATH } from './guest-init.js';
import type { HostIdRange } from './host-ids.js';

/**
 * One process tree inside the machine, started with bubblewrap: its own user namespace, whose root is an
 * unprivileged host id (native/userns-exec.c maps the machine's ids 0 to 65535 onto the host range),
 * pid, mount, uts, ipc and cgroup namespaces, inside the task's network namespace, with no capability,
 * no_new_privs and the seccomp filter of seccomp.ts. It sees only its root (never the host's), a fresh
 * /proc of its own pid namespace whose host-global parts are read-only or hidden, a minimal /dev and no
 * /sys at all.
 *
 * A small shell first writes its own pid into the cgroup leaf's cgroup.procs files, so every process
 * of the sandbox is limited and (for the sample) traced from its first instruction, and the cgroup
 * namespace is rooted at that leaf.
 */
export interface SandboxSpec {
  /** Bound as `/`: the machine's overlay, or the guest root read-only. */
  root: string;
  rootReadOnly: boolean;
  netnsPath: string;
  /** cgroup.procs files of the leaf the sandbox runs in. */
  procsFiles: string[];
  hostname: string;
  /** File holding the seccomp program (raw struct sock_filter[]). */
  seccompPath: string;
  /** Host files bound read-only over paths of the root (resolv.conf, hosts...). */
  roBinds: Array<{ source: string; dest: string }>;
  /** Extra size-limited tmpfs mounts: path -> bytes. */
  tmpfs: Record<string, number>;
  env: Record<string, string>;
  cwd: string;
  /** What runs, as a child of the machine's init (bound at GUEST_INIT_PATH by the caller). */
  argv: string[];
  /** Extra pipes after stdin/stdout/stderr/seccomp: they appear in the sandbox as fds 4, 5... */
  extraPipes?: number;
  /** The launcher (native/userns-exec.c) that makes the user namespace and maps its ids. */
  launcher: string;
  /** Host ids of the machine's ids 0 to 65535. */
  hostIds: HostIdRange;
  /** An empty file and an empty folder of the machine, bound over the parts of /proc it may not see. */
  covers: { emptyFile: string; emptyFolder: string };
  /** bwrap waits, namespaces ready, until something can be read from this fd before starting argv. */
  blockFd?: number;
  /** bwrap writes JSON about the sandbox here, `child-pid` (host pid of the sandbox's pid 1) first. */
  infoFd?: number;
  /** The sample supervisor's end of its socket pair: the init hands it the seccomp listener (SUPERVISOR_FD). */
  supervisorChannel?: Stream;
}

const SECCOMP_FD = 3;
/** Where native/init.c looks for the supervisor's socket. */
const SUPERVISOR_FD = 6;
const ENTER_CGROUP = 'IFS="\n"; for f in $NESTBOX_CGROUP_PROCS; do echo $$ > "$f" || exit 125; done; exec "$@"';

/**
 * Parts of /proc that reach host-global kernel state: kernel settings (/proc/sys), the magic SysRq key,
 * interrupt and bus settings. Their files refuse a root that is not the host's anyway; they are also
 * bound read-only, as container runtimes do, so that no file there can be written whatever its mode.
 * Bound from the host's /proc: the entries under /proc/sys/net and /proc/sys/kernel that belong to a
 * namespace answer for the namespace of whoever opens them, so the machine still sees its own.
 */
export const PROC_READ_ONLY = ['/proc/sys', '/proc/sysrq-trigger', '/proc/irq', '/proc/bus', '/proc/fs'];
/**
 * Files of /proc that show host memory, keys or timers: an empty read-only file stands in their place
 * (not /dev/null: /proc is mounted nodev, so a device there cannot be opened, which a sample would notice).
 */
export const PROC_HIDDEN_FILES = ['/proc/kcore', '/proc/keys', '/proc/timer_list', '/proc/sched_debug', '/proc/latency_stats'];
/** Folders of /proc with host hardware state: an empty read-only folder stands in their place. */
export const PROC_HIDDEN_FOLDERS = ['/proc/acpi', '/proc/scsi', '/proc/asound'];

/** bubblewrap fails on a mount point that does not exist: only what this kernel's /proc has is covered. */
let procPresent: { readOnly: string[]; files: string[]; folders: string[] } | undefined;
function procCoverArgs(covers: SandboxSpec['covers']): string[] {
  const present = (paths: string[]) => paths.filter((path) => existsSync(path));
  procPresent ??= { readOnly: present(PROC_READ_ONLY), files: present(PROC_HIDDEN_FILES), folders: present(PROC_HIDDEN_FOLDERS) };
  return [
    ...procPresent.readOnly.flatMap((path) => ['--ro-bind', path, path]),
    ...procPresent.files.flatMap((path) => ['--ro-bind', covers.emptyFile, path]),
    ...procPresent.folders.flatMap((path) => ['--ro-bind', covers.emptyFolder, path]),
  ];
}

export function sandboxArgv(spec: SandboxSpec): string[] {
  // No --unshare-user: bubblewrap runs as root of the launcher's user namespace, whose ids map onto the
  // host range; --unshare-user would nest a namespace mapping root alone.
  const bwrap = [
    'bwrap',
    '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup',
    '--hostname', spec.hostname,
    // The init (native/init.c) needs CAP_SETPCAP to empty the bounding set, then drops it before anything runs.
    '--die-with-parent', '--new-session', '--cap-drop', 'ALL', '--cap-add', 'CAP_SETPCAP',
    spec.rootReadOnly ? '--ro-bind' : '--bind', spec.root, '/',
    '--proc', '/proc',
    ...procCoverArgs(spec.covers),
    '--dev', '/dev',
    ...Object.entries(spec.tmpfs).flatMap(([path, bytes]) => ['--size', String(bytes), '--tmpfs', path]),
    ...spec.roBinds.flatMap(({ source, dest }) => ['--ro-bind', source, dest]),
    '--seccomp', String(SECCOMP_FD),
    '--clearenv',
    ...Object.entries(spec.env).flatMap(([name, value]) => ['--setenv', name, value]),
    '--chdir', spec.cwd,
    ...(spec.blockFd === undefined ? [] : ['--block-fd', String(spec.blockFd)]),
    ...(spec.infoFd === undefined ? [] : ['--info-fd', String(spec.infoFd)]),
    '--as-pid-1',
    '--',
    // Every sandbox starts with the init: it is what drops the last capability.
    GUEST_INIT_PATH,
    ...spec.argv,
  ];
  const userns = [spec.launcher, String(spec.hostIds.base), String(spec.hostIds.count)];
  return ['sh', '-c', ENTER_CGROUP, 'nestbox-enter', 'nsenter', `--net=${spec.netnsPath}`, ...userns, ...bwrap];
}

/** Starts the sandbox; stdout and stderr are pipes the caller reads. */
export function spawnSandbox(spec: SandboxSpec): ChildProcess {
  const argv = sandboxArgv(spec);
  const seccomp = openSync(spec.seccompPath, 'r');
  try {
    const stdio: Exclude<StdioOptions, string> = ['ignore', 'pipe', 'pipe', seccomp, ...Array<'pipe'>(spec.extraPipes ?? 0).fill('pipe')];
    if (spec.supervisorChannel) {
      while (stdio.length < SUPERVISOR_FD) stdio.push('ignore');
      stdio[SUPERVISOR_FD] = spec.supervisorChannel;
    }
    const child = spawn(argv[0]!, argv.slice(1), {
      stdio,
      env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', NESTBOX_CGROUP_PROCS: spec.procsFiles.join('\n') },
    });
    // The sandbox closes its ends of the extra pipes whenever it likes; that is no error here.
    for (const stream of child.stdio.slice(1)) stream?.on('error', () => undefined);
    return child;
  } finally {
    closeSync(seccomp);
  }
}

/** The environment a sample finds, as on a freshly logged-in root shell of a desktop machine. */
export function guestEnvironment(display: boolean): Record<string, string> {
  return {
    PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    HOME: '/root',
    USER: 'root',
    LOGNAME: 'root',
    SHELL: '/bin/bash',
    LANG: 'C.UTF-8',
    TERM: 'xterm',
    ...(display ? { DISPLAY: ':0' } : {}),
  };
}
