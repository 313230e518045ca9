import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

/** The real service, as `nestbox start --no-engine` runs it, in a child process for the benchmarks. */

const CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));

/** Starts the service of `home` on a free loopback port without a token; resolves once it listens. */
export async function startService(home: string): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [CLI, '--home', home, 'start', '--no-engine', '--host', '127.0.0.1', '--port', String(port)], {
    env: { ...process.env, NESTBOX_API_TOKEN: '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await waitForLine(child, /listening/);
  return { child, url: `http://127.0.0.1:${port}` };
}

async function freePort(): Promise<number> {
  const server = http.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Resolves with the first stdout line of `child` that matches; rejects if it exits first. */
export function waitForLine(child: ChildProcess, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    const onData = (text: string) => {
      buffered += text;
      const line = buffered.split('\n').find((candidate) => pattern.test(candidate));
      if (line !== undefined) {
        child.stdout?.off('data', onData);
        child.stdout?.resume();
        resolve(line);
      }
    };
    child.stdout?.setEncoding('utf8').on('data', onData);
    child.once('exit', (code) => reject(new Error(`${CLI} exited with ${code} before printing ${pattern}`)));
  });
}
