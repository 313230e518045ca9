import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { createWriteStream, openSync, type WriteStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { Logger } from 'pino';
import { internal } from '../../../errors.js';
import { endChild } from './child-exit.js';

/**
 * The task's full capture: tcpdump on the gateway side of the machine's link, where packets still carry
 * the addresses the sample used (the fake internet's DNAT happens after). tcpdump writes the pcap to its
 * stdout and we write the file, so tcpdump can drop to its own user and still fill a root-owned folder.
 *
 * A capture can start before its task is known (a network prepared ahead): its output waits in the pipe
 * until writeTo() names the file, and nothing is lost meanwhile.
 */
export interface Capture {
  /** Writes the pcap (from its first byte) to pcapPath from now on; throws when the file cannot be written. */
  writeTo(pcapPath: string): void;
  /** Writes every packet seen so far to the pcap and ends the capture; safe to call more than once. */
  stop(): Promise<CaptureStats>;
}

export interface CaptureStats {
  captured: number | null;
  droppedByKernel: number | null;
}

export interface CaptureOptions {
  netns: string;
  interfaceName: string;
  log: Logger;
}

const START_TIMEOUT_MS = 10_000;
/**
 * Kernel ring for the capture. veth has segmentation offloads, so libpcap sizes every ring slot for a
 * 64 KiB packet: its default 2 MiB held only 32 packets, and a burst while tcpdump waited for the CPU
 * lost packets. 32 MiB holds about 500.
 */
const BUFFER_KIB = 32 * 1024;
/** Before stopping, the capture must have been quiet this long, so packets in flight are written too. */
const QUIET_MS = 60;
const MAX_SETTLE_MS = 1_000;
const STOP_GRACE_MS = 5_000;

export async function startCapture({ netns, interfaceName, log }: CaptureOptions): Promise<Capture> {
  const child = spawn(
    'ip',
    ['netns', 'exec', netns, 'tcpdump', '-i', interfaceName, '-n', '-s', '0', '-B', String(BUFFER_KIB), '--immediate-mode', '-U', '-w', '-'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let file: WriteStream | null = null;
  let lastData = Date.now();
  const stderr = collect(child);
  const exited = new Promise<void>((resolve) => {
    child.once('close', () => resolve());
    child.once('error', () => resolve());
  });
  try {
    await untilListening(child, stderr, exited);
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    throw error;
  }
  log.debug({ netns, interfaceName }, 'capture started');

  let stopping: Promise<CaptureStats> | undefined;
  return {
    writeTo(pcapPath) {
      if (file) throw internal('the capture is already being written', { context: { pcapPath, netns } });
      file = openPcap(pcapPath);
      file.on('error', (error) => log.error({ err: error, pcapPath }, 'writing the capture failed'));
      child.stdout.on('data', () => (lastData = Date.now()));
      child.stdout.pipe(file);
    },
    stop: () =>
      (stopping ??= (async () => {
        if (file) await settle(() => lastData);
        // A capture never written anywhere is read to its end, so tcpdump is not left blocked on its pipe.
        else child.stdout.resume();
        // SIGINT makes tcpdump flush and print its counts; one that hangs is killed, and reaped either way.
        await endChild(child, { ask: () => child.kill('SIGINT'), graceMs: STOP_GRACE_MS });
        await exited;
        if (file) await finished(file);
        const stats = parseStats(stderr.text());
        if (stats.droppedByKernel) log.warn({ netns, ...stats }, 'capture lost packets');
        return stats;
      })()),
  };
}

/** Opened at once, so a folder that is missing or not writable fails the setup, not the write later. */
function openPcap(pcapPath: string): WriteStream {
  try {
    return createWriteStream(pcapPath, { fd: openSync(pcapPath, 'w', 0o644) });
  } catch (error) {
    throw internal(`cannot write the capture to ${pcapPath}: ${(error as Error).message}`, { cause: error, context: { pcapPath } });
  }
}

async function settle(lastData: () => number): Promise<void> {
  const deadline = Date.now() + MAX_SETTLE_MS;
  while (Date.now() < deadline && Date.now() - lastData() < QUIET_MS) {
    await new Promise((resolve) => setTimeout(resolve, QUIET_MS / 2));
  }
}

type TcpdumpProcess = ChildProcessByStdio<null, Readable, Readable>;

function collect(child: TcpdumpProcess) {
  let text = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => (text += chunk.slice(0, 64 * 1024)));
  return { text: () => text, stream: child.stderr };
}

/** tcpdump says "listening on" once the capture is open; packets from then on are kept. */
function untilListening(child: TcpdumpProcess, stderr: ReturnType<typeof collect>, exited: Promise<void>): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => fail('tcpdump did not start listening in time'), START_TIMEOUT_MS);
    const onData = () => {
      if (!stderr.text().includes('listening on')) return;
      clearTimeout(timer);
      stderr.stream.off('data', onData);
      resolve();
    };
    function fail(message: string) {
      clearTimeout(timer);
      stderr.stream.off('data', onData);
      reject(internal(message, { context: { pid: child.pid, stderr: stderr.text().slice(0, 2000) } }));
    }
    stderr.stream.on('data', onData);
    child.once('error', (error) => fail(`cannot start tcpdump: ${error.message}`));
    void exited.then(() => fail(`tcpdump exited: ${stderr.text().trim().split('\n').pop() ?? ''}`));
  });
}

function parseStats(text: string): CaptureStats {
  const number = (pattern: RegExp) => {
    const match = pattern.exec(text);
    return match ? Number(match[1]) : null;
  };
  return { captured: number(/(\d+) packets? captured/), droppedByKernel: number(/(\d+) packets? dropped by kernel/) };
}
