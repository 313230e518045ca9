import type { ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { copyFile, lstat, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { WINDOWS_COMPUTER_NAME, WINE_PREFIX } from '../../report/windows-paths.js';
import { hostPathInMachine } from './machine-path.js';
import type { SandboxSpec } from './sandbox.js';
import { TASK_BOOT_COMMAND, wineEnvironment } from './wine-prefix.js';
import { WinePidMap } from './wine-pids.js';
import { SAMPLE_WINEDEBUG } from './wine-relay.js';

/** The pipe wineserver's request trace and the prelude's clock reading reach the host by (native/init.c). */
export const PRELUDE_FD = 7;
/** Seconds wineserver lingers once the sample's last Wine process has gone, before Wine's own processes stop. */
const SERVER_LINGER_SECONDS = 2;
/** A relay log is cut here: a sample calling in a loop must not fill the host's disk. */
const RELAY_LOG_LIMIT = 256 * 2 ** 20;
const REGISTRY_FILES = ['system.reg', 'user.reg', 'userdef.reg'];

/** The prelude's last line, once Wine has booted. */
const BOOTED_LINE = 'nestbox-booted';
/** The machine's display (:0, sandbox.ts's DISPLAY) as /proc/net/unix lists its X server's socket. */
const X_SERVER_SOCKET = '@/tmp/.X11-unix/X0';
/** Tries 10 ms apart: the prelude waits for the display about as long as the host does (virtual-display.ts). */
const DISPLAY_WAIT_TRIES = 1000;

/**
 * Starts Wine's own processes before the sample, untraced (see native/init.c's prelude): wineserver,
 * whose request trace goes to PRELUDE_FD, then a program that makes Wine boot (wineboot: services.exe,
 * plugplay, winedevice) and open its desktop (explorer.exe). wineserver traces its requests (they name
 * the Unix ids of each Wine process) only once the sample's first process connects with the `server`
 * channel on: tracing Wine's boot too would make it twice as slow. Both clocks are read for processing,
 * which places Wine's tick stamps in time. The host starts the machine's display beside this sandbox
 * rather than before it: the desktop needs it, so the boot waits for the X server's socket (abstract,
 * in the machine's network namespace) after wineserver is up. Without a display (no DISPLAY) nothing
 * waits; a display that never comes is waited for about 10 s, as the host would. The prelude's last
 * line tells the host that the boot is over (Wine's processes never hold the pipe but wineserver, as its
 * standard error), so the host need not look at the init a thousand times while Wine boots.
 */
const PRELUDE_SCRIPT = String.raw`
export WINEDEBUG=-all
/usr/bin/python3 -c 'import time; print("nestbox-clock", repr(time.clock_gettime(time.CLOCK_REALTIME)), repr(time.clock_gettime(time.CLOCK_MONOTONIC_RAW)))' >&7 &
/usr/lib/wine/wineserver -p${SERVER_LINGER_SECONDS} 2>&7 </dev/null >/dev/null || exit 1
if [ -n "$DISPLAY" ]; then
  tries=0
  until grep -qs '${X_SERVER_SOCKET}$' /proc/net/unix || [ $tries -ge ${DISPLAY_WAIT_TRIES} ]; do
    tries=$((tries + 1))
    sleep 0.01
  done
fi
/usr/lib/wine/wine64 ${TASK_BOOT_COMMAND} </dev/null 7>&-
echo ${BOOTED_LINE} >&7
`;

const CLOCK_LINE = /^nestbox-clock ([\d.]+) ([\d.]+)$/m;

/** One Wine task's part of the machine: its sandbox, its raw results (logs/wine/), and the end of wineserver. */
export class WineRun {
  private readonly pids: WinePidMap;
  private relayLog: WriteStream | undefined;
  private relayBytes = 0;
  private clock: { realtime: number; monotonic: number } | undefined;
  private preludeText = '';
  private bootSeen = false;
  /** Resolves once the prelude says Wine has booted, or its pipe has ended (the prelude failed). */
  private readonly booted: Promise<void>;
  private bootOver: () => void = () => undefined;

  constructor(
    /** The task's logs/wine folder. */
    private readonly dir: string,
  ) {
    this.pids = new WinePidMap(() => this.sampleRoot());
    this.booted = new Promise((resolve) => (this.bootOver = resolve));
  }

  /** Host pid of the sandbox's pid 1 (the init), once known. */
  private init: number | undefined;
  private own = new Set<number>();

  /** The sample's first process: the init's child that is not one of Wine's own. */
  private async sampleRoot(): Promise<number | undefined> {
    if (this.init === undefined) return undefined;
    const children = await readFile(`/proc/${this.init}/task/${this.init}/children`, 'utf8').catch(() => '');
    return children.split(/\s+/).filter(Boolean).map(Number).find((pid) => !this.own.has(pid));
  }

  /** The init's arguments: the prelude, then the sample's command. */
  initArgv(command: string[]): string[] {
    return ['--prelude', '3', '/bin/sh', '-c', PRELUDE_SCRIPT, ...command];
  }

  /** What the sample's sandbox gets besides the usual: Wine's environment, the Windows computer name, the prelude's pipe. */
  sandboxOverrides(env: Record<string, string>): Partial<SandboxSpec> {
    return {
      env: { ...env, ...wineEnvironment(), WINEDEBUG: SAMPLE_WINEDEBUG },
      hostname: WINDOWS_COMPUTER_NAME,
      extraPipes: PRELUDE_FD - 3,
    };
  }

  /** The sample is released now; `machinePids` are Wine's own processes, started before it. */
  released(init: number | null, machinePids: number[]): void {
    this.init = init ?? undefined;
    this.own = new Set(machinePids);
    this.pids.released();
  }

  /** Resolves once Wine has booted (or the prelude's pipe has ended), at the latest after `timeoutMs`. */
  async untilBooted(timeoutMs: number): Promise<void> {
    const timer = new AbortController();
    await Promise.race([this.booted, sleep(timeoutMs, undefined, { signal: timer.signal }).catch(() => undefined)]);
    timer.abort();
  }

  /** Follows the sandbox's output: its standard error is Wine's debug output of the sample (the relay log). */
  async attach(child: ChildProcess): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const relay = createWriteStream(join(this.dir, 'relay.log'));
    this.relayLog = relay;
    child.stderr?.on('data', (chunk: Buffer) => this.writeRelay(chunk));
    const prelude = (child.stdio as Array<Readable | null | undefined>)[PRELUDE_FD];
    prelude?.on('data', (chunk: Buffer) => {
      this.pids.feed(chunk);
      this.readPrelude(chunk);
    });
    prelude?.once('close', () => this.bootOver());
    if (!prelude) this.bootOver();
  }

  private writeRelay(chunk: Buffer): void {
    const relay = this.relayLog;
    if (!relay || this.relayBytes >= RELAY_LOG_LIMIT) return;
    this.relayBytes += chunk.length;
    if (this.relayBytes < RELAY_LOG_LIMIT) {
      relay.write(chunk);
      return;
    }
    relay.write(chunk.subarray(0, chunk.length - (this.relayBytes - RELAY_LOG_LIMIT)));
    relay.write(`\nnestbox: relay log cut at ${RELAY_LOG_LIMIT} bytes\n`);
  }

  /** The prelude's own lines, before wineserver's trace comes on: the clocks, then the end of the boot. */
  private readPrelude(chunk: Buffer): void {
    if (this.clock && this.bootSeen) return;
    this.preludeText = (this.preludeText + chunk.toString()).slice(-4096);
    const match = CLOCK_LINE.exec(this.preludeText);
    if (match && !this.clock) this.clock = { realtime: Number(match[1]), monotonic: Number(match[2]) };
    if (!this.bootSeen && this.preludeText.includes(`${BOOTED_LINE}\n`)) {
      this.bootSeen = true;
      this.bootOver();
    }
  }

  /**
   * Makes wineserver save the registry and end (SIGTERM: it writes the registry files, then exits), for a
   * run that ends while Wine still runs; waits a little for it. `machinePids` are the machine's processes.
   */
  async stopServer(machinePids: number[]): Promise<void> {
    const servers: number[] = [];
    for (const pid of machinePids) {
      const comm = await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '');
      if (comm.trim() === 'wineserver') servers.push(pid);
    }
    for (const pid of servers) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // Gone already.
      }
    }
    const deadline = Date.now() + 5000;
    while (servers.some((pid) => isAlive(pid)) && Date.now() < deadline) await sleep(20);
  }

  /**
   * Writes the raw results: the pid map, the clocks, the prefix's registry files as the sample found
   * them (from the Wine layer) and as wineserver left them (from the machine's disk).
   */
  async collect(machineRoot: string, wineLayer: string): Promise<void> {
    await new Promise<void>((resolve) => (this.relayLog ? this.relayLog.end(resolve) : resolve()));
    await writeFile(join(this.dir, 'pids.json'), `${JSON.stringify(await this.pids.result())}\n`);
    if (this.clock) await writeFile(join(this.dir, 'clock.json'), `${JSON.stringify(this.clock)}\n`);
    await copyRegistry(join(wineLayer, WINE_PREFIX), join(this.dir, 'registry-before'));
    await copyRegistry(await hostPathInMachine(machineRoot, WINE_PREFIX, { isFolder: true }), join(this.dir, 'registry'));
  }
}

/** Copies the registry files that are regular files (a sample may have put a link in their place). */
async function copyRegistry(prefix: string, into: string): Promise<void> {
  await mkdir(into, { recursive: true });
  for (const name of REGISTRY_FILES) {
    const source = join(prefix, name);
    const isFile = await lstat(source).then((stat) => stat.isFile(), () => false);
    if (isFile) await copyFile(source, join(into, name));
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Files of the prefix that Wine itself writes: not files the sample dropped. */
export const WINE_OWN_FILES = [...REGISTRY_FILES, '.update-timestamp', 'wineserver'].map((name) => `${WINE_PREFIX}/${name}`);
