import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';

/**
 * Real captures for the tests: tcpdump writing a pcap file, and line-by-line dialogues with small local
 * servers to put in it.
 */

export interface CaptureOptions {
  /** Interface to listen on: `lo`, or `any` for the cooked (SLL) link type. */
  iface: string;
  /** tcpdump filter expression; none records everything on the interface. */
  filter?: string;
  /** Network namespace (made by the test) to capture in, through `ip netns exec`. */
  namespace?: string;
}

/** Starts tcpdump and resolves once it listens, so nothing sent afterwards is missed. */
export function startCapture(file: string, options: CaptureOptions): Promise<ChildProcess> {
  const tcpdump = ['tcpdump', '-i', options.iface, '-n', '-s', '0', '--immediate-mode', '-U', '-w', file, ...(options.filter ? [options.filter] : [])];
  const argv = options.namespace ? ['ip', 'netns', 'exec', options.namespace, ...tcpdump] : tcpdump;
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((resolve, reject) => {
    let stderr = '';
    child.stderr!.on('data', (data: Buffer) => {
      stderr += data.toString();
      if (stderr.includes('listening on')) resolve(child);
    });
    child.on('exit', (code) => reject(new Error(`tcpdump exited with ${code}: ${stderr}`)));
  });
}

/** Stops tcpdump the way an operator would (SIGINT), so it flushes the file before it exits. */
export async function stopCapture(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGINT');
  await exited;
}

/** Connects, sends each chunk as it is, 20 ms apart, then closes once the server has closed too. */
export function converse(host: string, port: number, chunks: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, host, async () => {
      for (const chunk of chunks) {
        socket.write(chunk);
        await new Promise((wait) => setTimeout(wait, 20));
      }
      socket.end();
    });
    socket.on('data', () => undefined);
    socket.on('close', () => resolve());
    socket.on('error', reject);
  });
}
