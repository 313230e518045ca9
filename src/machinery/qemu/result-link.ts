import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { internal } from '../../errors.js';
import { endChild, killChild } from '../host/network/child-exit.js';
import { addBridgeAddress } from './analysis-link.js';

/**
 * How a Windows guest's analyzer (Cuckoo's, which sends its results over TCP) reaches the host: a small
 * link of its own beside the machine's address in the task network. The bridge of the machine's
 * namespace takes the link's host address, where a forwarder (result-forwarder.ts) listens and hands
 * every connection to the task's result server. The results so never pass the task's gateway: neither
 * its rules (route none or drop) nor its capture see them. As with Cuckoo, the sample could reach that
 * address too; what it sent would be named and capped like any upload.
 */
export const RESULT_LINK = { host: '169.254.42.1', guest: '169.254.42.2', prefix: 30 } as const;

const FORWARDER = fileURLToPath(new URL('./result-forwarder.js', import.meta.url));
const READY_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 2_000;

export interface ResultLink {
  close(): Promise<void>;
}

type Forwarder = ChildProcessByStdio<Writable, Readable, Readable>;

export async function openResultLink(netns: string, port: number, resultSocket: string): Promise<ResultLink> {
  await addBridgeAddress(netns, `${RESULT_LINK.host}/${RESULT_LINK.prefix}`);
  const settings = JSON.stringify({ host: RESULT_LINK.host, port, socket: resultSocket });
  const forwarder: Forwarder = spawn('ip', ['netns', 'exec', netns, process.execPath, FORWARDER, settings], { stdio: ['pipe', 'pipe', 'pipe'] });
  forwarder.stdin.on('error', () => undefined);
  let stderr = '';
  forwarder.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-2000)));
  try {
    await ready(forwarder);
  } catch (error) {
    await killChild(forwarder).catch(() => undefined);
    throw internal(`the result link did not open in ${netns}: ${(error as Error).message} ${stderr}`.trim(), { cause: error, context: { netns } });
  }
  forwarder.stdout.resume();
  return { close: () => endChild(forwarder, { ask: () => forwarder.stdin.end(), graceMs: STOP_TIMEOUT_MS }) };
}

function ready(forwarder: Forwarder): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('not ready in time')), READY_TIMEOUT_MS);
    forwarder.stdout.setEncoding('utf8').once('data', (chunk: string) => {
      clearTimeout(timer);
      if (chunk.startsWith('ready')) resolve();
      else reject(new Error(`said ${JSON.stringify(chunk.slice(0, 200))}`));
    });
    forwarder.once('error', reject);
    forwarder.once('exit', (code) => reject(new Error(`exited with code ${code}`)));
  });
}
