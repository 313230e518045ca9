import { execFile } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import type { Logger } from 'pino';
import type { TracerOptions, TracerSession } from '../contracts.js';
import { EventsWriter } from './events-writer.js';
import { sampleDecoder } from './sample-scope.js';
import { StraceParser } from './strace-parser.js';
import type { TraceRecord } from './trace-records.js';

const run = promisify(execFile);

/** The calls the event log describes (those the eBPF tracers record); only these are counted in apistats. */
const STRACE_CALLS = [
  'execve', 'execveat', 'clone', 'clone3', 'fork', 'vfork', 'prctl',
  'open', 'openat', 'openat2', 'creat', 'close', 'write', 'pwrite64', 'writev', 'pwritev', 'pwritev2',
  'dup', 'dup2', 'dup3', 'fcntl', 'pipe', 'pipe2', 'socketpair', 'chdir', 'fchdir',
  'rename', 'renameat', 'renameat2', 'unlink', 'unlinkat', 'rmdir', 'mkdir', 'mkdirat',
  'chmod', 'fchmod', 'fchmodat', 'chown', 'lchown', 'fchown', 'fchownat', 'link', 'linkat', 'symlink', 'symlinkat',
  'socket', 'connect', 'bind', 'listen', 'accept', 'accept4', 'sendto', 'sendmsg', 'recvfrom', 'recvmsg',
  'memfd_create', 'mmap', 'mprotect', 'ptrace', 'init_module', 'finit_module', 'delete_module',
  'setuid', 'setgid', 'setreuid', 'setregid', 'setresuid', 'setresgid', 'setfsuid', 'setfsgid',
  'kill', 'tkill', 'tgkill',
  'nanosleep', 'clock_nanosleep', 'alarm', 'timerfd_create', 'timerfd_settime',
  'setsid', 'setpgid', 'capset', 'mount', 'umount2', 'truncate', 'ftruncate', 'getdents64',
];
/** Bytes of each string strace prints: enough for paths and for the payloads kept (PAYLOAD_BYTES); write buffers are cut there too. */
const STRING_BYTES = 512;

let seccompSupport: Promise<boolean> | null = null;

/** `--seccomp-bpf` stops only at the traced calls, making strace several times cheaper; strace < 5.3 lacks it. */
function straceSupportsSeccomp(): Promise<boolean> {
  seccompSupport ??= run('strace', ['-f', '--seccomp-bpf', '-qq', '-o', '/dev/null', '-e', 'trace=getpid', 'true']).then(
    () => true,
    () => false,
  );
  return seccompSupport;
}

/** The command prefix running a program under strace, writing its raw log to `rawPath`. */
export function straceCommand(rawPath: string, seccomp: boolean): string[] {
  return ['strace', ...straceArguments(seccomp), '-o', rawPath, '--'];
}

/** strace's options whose output `StraceParser` reads (without the output file and the command). */
export function straceArguments(seccomp: boolean): string[] {
  return [
    '-f',
    ...(seccomp ? ['--seccomp-bpf'] : []),
    '-ttt',
    '-q',
    '-xx',
    '-X',
    'raw',
    '-s',
    String(STRING_BYTES),
    '-e',
    `trace=${STRACE_CALLS.join(',')}`,
    '-e',
    'signal=none',
  ];
}

/**
 * The fallback tracer: the sample must be launched under strace (`wrap`), so it can see that it is
 * traced (PTRACE_TRACEME fails). strace writes its log next to the events file; stop() turns it into
 * events and removes it. The log path must be writable where strace runs.
 */
export async function startStrace(options: TracerOptions, log: Logger, reason: string): Promise<TracerSession> {
  const seccomp = await straceSupportsSeccomp();
  const rawPath = `${options.eventsPath}.strace`;
  const writer = await EventsWriter.open(options.eventsPath);
  writer.write({
    ts: Date.now() / 1000,
    pid: 0,
    ppid: 0,
    tid: 0,
    comm: '',
    kind: 'tracer.info',
    tracer: 'strace',
    message: `strace${seccomp ? ' --seccomp-bpf' : ''} (the sample can detect it): ${reason}`,
  });
  let stopping: Promise<{ lost: number }> | null = null;
  const stop = async () => {
    await decodeStraceLog(rawPath, writer, options, log);
    await writer.close();
    await rm(rawPath, { force: true });
    return { lost: 0 };
  };
  return {
    name: 'strace',
    wrap: (argv) => [...straceCommand(rawPath, seccomp), ...argv],
    stop: () => (stopping ??= stop()),
  };
}

/**
 * strace prints a call when it returns, stamped with when it began, and lines of calls that waited
 * (`<unfinished ...>`) come late: records are sorted by time before decoding, so a fork is seen before
 * anything its child did.
 */
async function decodeStraceLog(rawPath: string, writer: EventsWriter, options: TracerOptions, log: Logger): Promise<void> {
  const records: TraceRecord[] = [];
  const parser = new StraceParser((record) => records.push(record));
  try {
    const lines = createInterface({ input: createReadStream(rawPath, { encoding: 'latin1' }), crlfDelay: Infinity });
    for await (const line of lines) parser.line(line);
  } catch (error) {
    log.warn({ err: error, rawPath }, 'no strace log to decode (was the sample run under wrap()?)');
    return;
  }
  parser.finish(records.reduce((newest, record) => Math.max(newest, record.ts), 0) || Date.now() / 1000);
  records.sort((a, b) => a.ts - b.ts);
  // strace starts the sample itself: what it sees begins with the sample's first exec.
  const decoder = sampleDecoder((event) => writer.write(event), options.sample, { belowInit: true });
  for (const record of records) decoder.record(record);
  decoder.finish(records.at(-1)?.ts ?? Date.now() / 1000);
}
