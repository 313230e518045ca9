import { mkdir, open, writeFile, type FileHandle } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isNestboxError, unavailable } from '../../errors.js';
import { AgentClient } from './agent-client.js';
import { qemuArgv, RESULT_CHANNELS, type ColdBoot, type Hardware, type ResultChannel } from './machine-args.js';
import { launchQemu, type QemuProcess } from './qemu-process.js';

/**
 * One running QEMU guest with its run folder (QMP socket, serial log, result-channel sockets, pid file)
 * and a client for its agent. Both the image build (cold boot, then save) and every task (restore) use it.
 */
export interface GuestMachineOptions {
  hardware: Hardware;
  /** Created if missing; everything of this machine on the host lives here. */
  runDir: string;
  processName: string;
  disk: string;
  start: { boot: ColdBoot | null } | { stateFile: string };
  /** Host tap device for the analysis card. */
  tap?: string | null;
  /** Open the result channels as sockets in the run folder (otherwise their output is discarded). */
  channels?: boolean;
}

const PORT_ATTEMPTS = 5;

export class GuestMachine {
  private constructor(
    readonly runDir: string,
    readonly qemu: QemuProcess,
    readonly agent: AgentClient,
    readonly agentPort: number,
    private readonly channelSockets: Record<ResultChannel, string | null>,
  ) {}

  static async start(options: GuestMachineOptions): Promise<GuestMachine> {
    await mkdir(options.runDir, { recursive: true });
    const channels = Object.fromEntries(
      RESULT_CHANNELS.map((channel) => [channel, options.channels ? join(options.runDir, `${channel}.sock`) : null]),
    ) as Record<ResultChannel, string | null>;
    for (let attempt = 1; ; attempt++) {
      const agentPort = await freeLoopbackPort();
      const state = 'stateFile' in options.start ? await openState(options.start.stateFile) : null;
      try {
        const qemu = await launchQemu(
          qemuArgv(options.hardware, {
            processName: options.processName,
            disk: options.disk,
            qmpSocket: join(options.runDir, 'qmp.sock'),
            agentPort,
            serialLog: join(options.runDir, 'serial.log'),
            channels,
            tap: options.tap ?? null,
            start: options.start,
          }),
          join(options.runDir, 'qmp.sock'),
          state ? [state.fd] : [],
        );
        await writeFile(join(options.runDir, 'qemu.pid'), `${qemu.pid}\n`);
        return new GuestMachine(options.runDir, qemu, new AgentClient(`http://127.0.0.1:${agentPort}`), agentPort, channels);
      } catch (error) {
        // Another program may have taken the port between our probe and QEMU's bind.
        const portTaken = isNestboxError(error) && /host forwarding rule/.test(error.message);
        if (!portTaken || attempt >= PORT_ATTEMPTS) throw error;
      } finally {
        // QEMU holds its own copy of the descriptor from the moment it is spawned.
        await state?.close();
      }
    }
  }

  channelSocket(channel: ResultChannel): string | null {
    return this.channelSockets[channel];
  }

  /**
   * Waits until QEMU has loaded the saved state. The state was saved from a stopped guest, so the guest
   * stays paused until `resume()`: the host side can be wired up first. QEMU exits when the state does
   * not load (other hardware, damaged file); its message is in the error.
   */
  async waitUntilLoaded(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const status = await this.status();
      if (status === 'paused' || status === 'running') return;
      if (status !== 'inmigrate') throw unavailable(`the machine is ${status} instead of loading its saved state`);
      if (Date.now() > deadline) throw unavailable(`the machine's saved state was not loaded after ${timeoutMs} ms`);
      await sleep(4);
    }
  }

  async resume(): Promise<void> {
    await this.qemu.qmp.execute('cont');
  }

  private async status(): Promise<string> {
    try {
      return (await this.qemu.qmp.execute<{ status: string }>('query-status')).status;
    } catch (error) {
      await Promise.race([this.qemu.exited, sleep(200)]);
      throw unavailable(`QEMU stopped answering: ${this.qemu.stderr() || (error as Error).message}`, { cause: error });
    }
  }

  kill(): Promise<void> {
    return this.qemu.kill();
  }
}

async function openState(path: string): Promise<FileHandle> {
  try {
    return await open(path, 'r');
  } catch (error) {
    throw unavailable(`the machine's saved state ${path} cannot be read: ${(error as Error).message}`, { cause: error });
  }
}

async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === 'object' && address ? address.port : 0;
}
