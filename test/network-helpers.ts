import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, openSync, readdirSync, readlinkSync } from 'node:fs';
import { promisify } from 'node:util';
import { pino } from 'pino';

/** Shared by the network-*.test.ts files: running clients inside task namespaces and reading captures. */
export const quietLog = pino({ level: 'silent' });

const execFileAsync = promisify(execFile);

export interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/** A fresh task network id, so test files running at the same time never share names. */
export function testId(): string {
  return `n${randomBytes(3).toString('hex')}`;
}

export async function runIn(netns: string, command: string, args: string[], timeoutMs = 15_000): Promise<Outcome> {
  return runHost('ip', ['netns', 'exec', netns, command, ...args], timeoutMs);
}

export async function runHost(command: string, args: string[], timeoutMs = 15_000): Promise<Outcome> {
  const started = Date.now();
  try {
    const { stdout, stderr } = await execFileAsync(command, args, { timeout: timeoutMs, encoding: 'utf8', maxBuffer: 16 << 20 });
    return { code: 0, stdout, stderr, ms: Date.now() - started };
  } catch (error) {
    const failed = error as { code?: number | string; stdout?: string; stderr?: string };
    return {
      code: typeof failed.code === 'number' ? failed.code : -1,
      stdout: failed.stdout ?? '',
      stderr: failed.stderr ?? String(error),
      ms: Date.now() - started,
    };
  }
}

export interface Step {
  send?: string;
  /** Regular expression the text received since the previous step must match. */
  expect?: string;
  /** Ends the client's side and waits until the server has read everything and closed its side. */
  hangUp?: boolean;
}

/**
 * Plays a line dialogue (SMTP, IRC, FTP...) from inside a namespace with a Node client, as a sample
 * would: connects, sends each step's line and waits for its expected answer. Returns what was received.
 */
export async function dialogue(netns: string, target: { host: string; port: number; tls?: boolean }, steps: Step[]) {
  const client = `
    import net from 'node:net'; import tls from 'node:tls';
    const [host, port, useTls, stepsJson] = process.argv.slice(1);
    const steps = JSON.parse(stepsJson);
    const socket = useTls === 'tls' ? tls.connect({ host, port: Number(port), rejectUnauthorized: false }) : net.connect(Number(port), host);
    let received = ''; let fresh = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk) => { received += chunk; fresh += chunk; });
    const finish = (ok, why) => { process.stdout.write(JSON.stringify({ ok, why, received })); process.exit(0); };
    socket.on('error', (error) => finish(false, error.message));
    setTimeout(() => finish(false, 'timeout'), 8000);
    const waitFor = (pattern) => new Promise((resolve) => {
      const check = () => { if (new RegExp(pattern).test(fresh)) { fresh = ''; resolve(); } else setTimeout(check, 10); };
      check();
    });
    socket.once(useTls === 'tls' ? 'secureConnect' : 'connect', async () => {
      for (const step of steps) {
        if (step.send !== undefined) socket.write(step.send + '\\r\\n');
        if (step.expect !== undefined) await waitFor(step.expect);
        if (step.hangUp) await new Promise((resolve) => { socket.once('end', resolve); socket.end(); });
      }
      finish(true, '');
    });`;
  const outcome = await runIn(netns, process.execPath, [
    '--input-type=module', '-e', client, target.host, String(target.port), target.tls ? 'tls' : 'plain', JSON.stringify(steps),
  ]);
  assert.equal(outcome.code, 0, outcome.stderr);
  return JSON.parse(outcome.stdout) as { ok: boolean; why: string; received: string };
}

/** Rows of tshark fields for the packets matching filter. */
export async function tsharkFields(pcap: string, filter: string, fields: string[]): Promise<string[][]> {
  const args = ['-r', pcap, '-Y', filter, '-T', 'fields', '-E', 'separator=|', ...fields.flatMap((field) => ['-e', field])];
  const outcome = await runHost('tshark', args);
  assert.equal(outcome.code, 0, outcome.stderr);
  return outcome.stdout.split('\n').filter(Boolean).map((line) => line.split('|'));
}

/** Before any test traffic: the machine's only way anywhere is its gateway, which has no way further. */
export async function assertNoWayOut(machineNetns: string, gatewayNetns: string, gatewayAddress: string): Promise<void> {
  const routes = JSON.parse((await runHost('ip', ['-n', machineNetns, '-j', 'route', 'show'])).stdout) as {
    dst: string;
    gateway?: string;
  }[];
  const [a, b, c, d] = gatewayAddress.split('.').map(Number) as [number, number, number, number];
  const link = `${a}.${b}.${c}.${d - 1}/30`;
  assert.deepEqual(
    routes.map((route) => `${route.dst} ${route.gateway ?? ''}`.trim()).sort(),
    [link, `default ${gatewayAddress}`].sort(),
  );
  const rules = JSON.parse((await runHost('ip', ['-n', machineNetns, '-j', 'rule', 'show'])).stdout) as { table: string }[];
  assert.deepEqual(rules.map((rule) => rule.table).sort(), ['default', 'local', 'main']);
  const links = JSON.parse((await runHost('ip', ['-n', gatewayNetns, '-j', 'link', 'show'])).stdout) as { ifname: string }[];
  assert.deepEqual(links.map((link) => link.ifname).sort(), ['gw0', 'lo']);
  const gatewayRoutes = JSON.parse((await runHost('ip', ['-n', gatewayNetns, '-j', 'route', 'show'])).stdout) as { dst: string }[];
  assert.ok(!gatewayRoutes.some((route) => route.dst === 'default'), 'the gateway has no default route');
}

export interface HeldNetns {
  /** Processes in the namespace now, whether or not it still has its name. */
  pids(): number[];
  release(): void;
}

/**
 * Holds a named network namespace open, so that after nestbox deletes it, it lives on (empty) under the
 * same inode. Noting only its inode is not enough: the kernel gives a freed namespace number to the next
 * namespace made, and a check by that number would list the processes of another test's network.
 */
export function holdNetns(name: string): HeldNetns {
  const fd = openSync(`/run/netns/${name}`, 'r');
  const inode = fstatSync(fd).ino;
  return { pids: () => pidsInNetnsInode(inode), release: () => closeSync(fd) };
}

function pidsInNetnsInode(inode: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readlinkSync(`/proc/${entry}/ns/net`) === `net:[${inode}]`) pids.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}

/** Names of nestbox's network leftovers for a task id: namespaces, host links and host nft tables. */
export async function remainsOf(id: string): Promise<string[]> {
  const namespaces = (await runHost('ip', ['netns', 'list'])).stdout.split('\n').map((line) => line.split(' ')[0] ?? '');
  const links = JSON.parse((await runHost('ip', ['-j', 'link', 'show'])).stdout) as { ifname: string }[];
  const tables = (await runHost('nft', ['list', 'tables'])).stdout.split('\n');
  return [
    ...namespaces.filter((name) => name.includes(id)),
    ...links.map((link) => link.ifname).filter((name) => name.includes(id)),
    ...tables.filter((line) => line.includes(id)),
  ];
}
