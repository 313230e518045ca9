import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { internal } from '../../../errors.js';
import { endChild, killChild } from './child-exit.js';
import type { FakeServicesSettings } from './fake-services/main.js';
import type { TlsMaterial } from './tls-certificate.js';

/**
 * Starts and keeps running the fake-services process (fake-services/main.ts) inside a gateway namespace.
 * If it dies while the task runs, it is started again, so one crash of a service does not take the fake
 * internet away for the rest of the analysis.
 */
export interface FakeInternet {
  stop(): Promise<void>;
}

export interface FakeInternetOptions {
  netns: string;
  tls: TlsMaterial;
  log: Logger;
}

const MAIN = fileURLToPath(new URL('./fake-services/main.js', import.meta.url));
const READY_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 3_000;
const MAX_RESTARTS = 3;
/** The services drop to nobody:nogroup once their ports are bound. */
const NOBODY = 65534;

type Helper = ChildProcessByStdio<Writable, Readable, Readable>;

export async function startFakeInternet(options: FakeInternetOptions): Promise<FakeInternet> {
  // Bound to every address of the gateway namespace, which has only its loopback and the machine's link,
  // so the services can start before the link exists.
  const settings: FakeServicesSettings = { host: '0.0.0.0', tls: options.tls, uid: NOBODY, gid: NOBODY };
  let stopping = false;
  let restarts = 0;
  let current = await launch(options.netns, settings);
  // A restart still starting when stop() comes must be waited for, or its helper would outlive the task.
  let relaunching: Promise<void> | undefined;

  const watch = (helper: Helper) => {
    helper.once('exit', (code, signal) => {
      if (stopping) return;
      options.log.warn({ netns: options.netns, code, signal, restarts }, 'fake internet exited; restarting');
      if (restarts >= MAX_RESTARTS) return;
      restarts += 1;
      relaunching = launch(options.netns, settings).then(
        (helperAgain) => {
          current = helperAgain;
          if (!stopping) watch(helperAgain);
        },
        (error: unknown) => options.log.error({ err: error, netns: options.netns }, 'fake internet could not restart'),
      );
    });
  };
  watch(current);

  return {
    async stop() {
      stopping = true;
      await relaunching;
      await stopHelper(current);
    },
  };
}

async function launch(netns: string, settings: FakeServicesSettings): Promise<Helper> {
  const helper = spawn('ip', ['netns', 'exec', netns, process.execPath, MAIN], { stdio: ['pipe', 'pipe', 'pipe'] });
  helper.stdin.on('error', () => undefined);
  helper.stdin.write(`${JSON.stringify(settings)}\n`);
  let stderr = '';
  helper.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
  helper.stdout.setEncoding('utf8');
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('not ready in time')), READY_TIMEOUT_MS);
      let stdout = '';
      helper.stdout.on('data', (chunk: string) => {
        stdout += chunk;
        if (!stdout.startsWith('ready')) return;
        clearTimeout(timer);
        resolve();
      });
      helper.once('error', (error) => reject(error));
      helper.once('exit', (code) => reject(new Error(`exited with code ${code}`)));
    });
  } catch (error) {
    // Waited for, so a helper that failed to start is gone from the namespace before teardown checks it.
    await killChild(helper).catch(() => undefined);
    throw internal(`the fake internet did not start in ${netns}: ${(error as Error).message}`, {
      cause: error,
      context: { netns, stderr },
    });
  }
  helper.stdout.resume();
  return helper;
}

/** Closing stdin asks the helper to stop; it is killed if it does not. Resolves once it is reaped. */
function stopHelper(helper: Helper): Promise<void> {
  return endChild(helper, { ask: () => helper.stdin.end(), graceMs: STOP_TIMEOUT_MS });
}
