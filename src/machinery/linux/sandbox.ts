import { type ChildProcess, spawn, type StdioOptions } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';

/**
 * One process tree inside the machine, started with bubblewrap: its own user (uid 0 inside, no
 * capability), pid, mount, uts, ipc and cgroup namespaces, inside the task's network namespace, with
 * no_new_privs and the seccomp filter of seccomp.ts. It sees only its root (never the host's), a fresh
 * /proc of its own pid namespace, a minimal /dev and no /sys at all.
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
  argv: string[];
  /** Extra pipes after stdin/stdout/stderr/seccomp: they appear in the sandbox as fds 4, 5... */
  extraPipes?: number;
  /** bubblewrap 0.8 and later can forbid nested user namespaces itself (seccomp refuses them anyway). */
  disableUserns: boolean;
  /** bwrap waits, namespaces ready, until something can be read from this fd before starting argv. */
  blockFd?: number;
  /** bwrap writes JSON about the sandbox here, `child-pid` (host pid of the sandbox's pid 1) first. */
  infoFd?: number;
}

const SECCOMP_FD = 3;
const ENTER_CGROUP = 'IFS="\n"; for f in $NESTBOX_CGROUP_PROCS; do echo $$ > "$f" || exit 125; done; exec "$@"';

/** Whether this bubblewrap knows --disable-userns (0.8.0 and later). */
export function supportsDisableUserns(versionText: string): boolean {
  const [major = 0, minor = 0] = (/(\d+)\.(\d+)/.exec(versionText) ?? []).slice(1).map(Number);
  return major > 0 || minor >= 8;
}

export function sandboxArgv(spec: SandboxSpec): string[] {
  const bwrap = [
    'bwrap',
    '--unshare-user', '--uid', '0', '--gid', '0',
    ...(spec.disableUserns ? ['--disable-userns'] : []),
    '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup',
    '--hostname', spec.hostname,
    '--die-with-parent', '--new-session', '--cap-drop', 'ALL',
    spec.rootReadOnly ? '--ro-bind' : '--bind', spec.root, '/',
    '--proc', '/proc',
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
    ...spec.argv,
  ];
  return ['sh', '-c', ENTER_CGROUP, 'nestbox-enter', 'nsenter', `--net=${spec.netnsPath}`, ...bwrap];
}

/** Starts the sandbox; stdout and stderr are pipes the caller reads. */
export function spawnSandbox(spec: SandboxSpec): ChildProcess {
  const argv = sandboxArgv(spec);
  const seccomp = openSync(spec.seccompPath, 'r');
  try {
    const stdio: StdioOptions = ['ignore', 'pipe', 'pipe', seccomp, ...Array<'pipe'>(spec.extraPipes ?? 0).fill('pipe')];
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
