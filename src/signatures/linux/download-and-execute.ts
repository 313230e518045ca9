import type { BehaviorEvent } from '../../report/events.js';
import { isRemoteInet } from '../helpers/addresses.js';
import { fileTouches, MODIFY, touches } from '../helpers/file-access.js';
import { scriptOf } from '../helpers/command-line.js';
import { PathTable } from '../helpers/path-table.js';
import { Signature, type EventOf, type SignatureContext, type SignatureInfo } from '../signature.js';

type Kind = 'net.connect' | 'file.open' | 'file.write' | 'file.rename' | 'file.chmod' | 'process.exec';

/** Downloaded files followed at most: a log writing millions of files must not hold them all. */
const MAX_DOWNLOADS = 10_000;

/** Where downloaded content can be a file someone runs later: not devices, pipes or kernel files, but /dev/shm is a folder droppers like. */
const REGULAR_FILE = /^(?!\/(dev\/(?!shm\/)|proc\/|sys\/))/;

/**
 * A file written by a process that talked to another machine, and then made executable or run: the
 * download-and-execute pattern of droppers and botnet loaders (wget/curl, then chmod +x, then run).
 */
export class DownloadAndExecute extends Signature<Kind> {
  readonly info: SignatureInfo = {
    name: 'download_and_execute',
    description: 'Downloads a file from the network and then makes it executable or runs it',
    severity: 4,
    categories: ['downloader'],
    ttp: ['T1105'],
  };
  override readonly kinds: readonly Kind[] = ['net.connect', 'file.open', 'file.write', 'file.rename', 'file.chmod', 'process.exec'];

  readonly #networked = new Map<number, BehaviorEvent>();
  readonly #downloads = new PathTable<BehaviorEvent>(MAX_DOWNLOADS);

  override onEvent(event: EventOf<Kind>, ctx: SignatureContext): void {
    switch (event.kind) {
      case 'net.connect':
        if (isRemoteInet(event.family, event.address) && !this.#networked.has(event.pid)) this.#networked.set(event.pid, event);
        break;
      case 'file.open':
      case 'file.write':
        if (this.#networked.has(event.pid) && REGULAR_FILE.test(event.path) && fileTouches(event).some((touch) => touches(touch, MODIFY))) {
          if (!this.#downloads.has(event.path)) this.#downloads.set(event.path, event);
        }
        break;
      case 'file.rename':
        this.#follow(event.from, event.to);
        break;
      case 'file.chmod':
        if (event.mode & 0o111) this.#markUse(event.path, event, ctx);
        break;
      case 'process.exec':
        this.#markUse(event.path, event, ctx);
        this.#markUse(scriptOf(event.path, event.argv) ?? '', event, ctx);
        break;
    }
  }

  #follow(from: string, to: string): void {
    const write = this.#downloads.get(from);
    if (write) this.#downloads.set(to, write);
  }

  #markUse(path: string, use: BehaviorEvent, ctx: SignatureContext): void {
    const write = this.#downloads.find(path);
    if (!write) return;
    const connect = this.#networked.get(write.pid);
    if (connect) this.markEvent(connect, ctx);
    this.markEvent(write, ctx);
    this.markEvent(use, ctx);
  }
}
