import { fileTouches, MODIFY, touches } from '../helpers/file-access.js';
import { PathTable } from '../helpers/path-table.js';
import { WORLD_WRITABLE_DIRS } from '../helpers/paths.js';
import { Signature, type EventOf, type SignatureContext, type SignatureInfo } from '../signature.js';

/** Files written in world-writable folders followed at most, so that memory stays bounded. */
const MAX_WRITTEN = 10_000;

const EXECUTABLE_TYPE = /\bELF\b.*\b(executable|shared object)\b/;

type Kind = 'file.open' | 'file.write' | 'file.rename' | 'file.chmod' | 'process.exec';

/**
 * A program written to a world-writable folder (/tmp, /var/tmp, /dev/shm) and made executable or run there:
 * where droppers stage payloads, because every user may write there and tmpfs leaves no trace on disk.
 */
export class ExecutableDroppedTmp extends Signature<Kind> {
  readonly info: SignatureInfo = {
    name: 'executable_dropped_tmp',
    description: 'Drops an executable in /tmp, /var/tmp or /dev/shm, or writes a file there and runs it',
    severity: 3,
    categories: ['dropper'],
    ttp: [],
  };
  override readonly kinds: readonly Kind[] = ['file.open', 'file.write', 'file.rename', 'file.chmod', 'process.exec'];

  readonly #written = new PathTable<EventOf<Kind>>(MAX_WRITTEN);

  override onEvent(event: EventOf<Kind>, ctx: SignatureContext): void {
    if (event.kind === 'file.chmod') {
      if (event.mode & 0o111) this.#markUse(event.path, event, ctx);
    } else if (event.kind === 'process.exec') {
      this.#markUse(event.path, event, ctx);
    } else {
      for (const touch of fileTouches(event)) {
        if (touches(touch, MODIFY) && WORLD_WRITABLE_DIRS.test(touch.path) && !this.#written.has(touch.path)) this.#written.set(touch.path, event);
      }
    }
  }

  override onComplete(ctx: SignatureContext): void {
    for (const dropped of ctx.report.dropped ?? []) {
      if (WORLD_WRITABLE_DIRS.test(dropped.filepath ?? '') && EXECUTABLE_TYPE.test(dropped.type)) {
        this.markIoc('file', dropped.filepath, `executable dropped in a world-writable folder: ${dropped.type}`);
      }
    }
  }

  #markUse(path: string, use: EventOf<Kind>, ctx: SignatureContext): void {
    const write = this.#written.find(path);
    if (!write) return;
    this.markEvent(write, ctx);
    this.markEvent(use, ctx);
  }
}
