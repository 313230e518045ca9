import { fileTouches, MODIFY, touches } from '../helpers/file-access.js';
import { PathTable } from '../helpers/path-table.js';
import { WORLD_WRITABLE_DIRS } from '../helpers/paths.js';
import { MARK_LIMIT, Signature, type EventOf, type SignatureContext, type SignatureInfo } from '../signature.js';

/** Files written in world-writable folders followed at most, so that memory stays bounded. */
const MAX_WRITTEN = 10_000;

const EXECUTABLE_TYPE = /\bELF\b.*\b(executable|shared object)\b/;

type Kind = 'file.open' | 'file.write' | 'file.rename' | 'file.chmod' | 'process.exec';

/**
 * A program written to a world-writable folder (/tmp, /var/tmp, /dev/shm) and made executable or run there:
 * where droppers stage payloads, because every user may write there and tmpfs leaves no trace on disk.
 * A file the dropped files show to be a script or other text does not count: scripts writing a helper
 * script to /tmp and running it are everyday work (a file whose type is unknown still counts).
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
  /** Each file made executable or run, by the path it was written at: its write, then its uses. */
  readonly #used = new Map<string, EventOf<Kind>[]>();

  override onEvent(event: EventOf<Kind>): void {
    if (event.kind === 'file.chmod') {
      if (event.mode & 0o111) this.#noteUse(event.path, event);
    } else if (event.kind === 'process.exec') {
      this.#noteUse(event.path, event);
    } else {
      for (const touch of fileTouches(event)) {
        if (touches(touch, MODIFY) && WORLD_WRITABLE_DIRS.test(touch.path) && !this.#written.has(touch.path)) this.#written.set(touch.path, event);
      }
    }
  }

  override onComplete(ctx: SignatureContext): void {
    const types = new Map<string, string>();
    for (const dropped of ctx.report.dropped ?? []) {
      if (!WORLD_WRITABLE_DIRS.test(dropped.filepath ?? '')) continue;
      types.set(dropped.filepath, dropped.type);
      if (EXECUTABLE_TYPE.test(dropped.type)) this.markIoc('file', dropped.filepath, `executable dropped in a world-writable folder: ${dropped.type}`);
    }
    for (const [path, events] of this.#used) {
      const type = types.get(path);
      if (type !== undefined && !EXECUTABLE_TYPE.test(type)) continue;
      for (const event of events) this.markEvent(event, ctx);
    }
  }

  #noteUse(path: string, use: EventOf<Kind>): void {
    const write = this.#written.find(path);
    if (!write) return;
    let events = this.#used.get(path);
    if (!events && this.#used.size < MAX_WRITTEN) this.#used.set(path, (events = [write]));
    // Marks are kept per distinct call, so a helper run in a loop needs its first few runs only.
    if (events && events.length < MARK_LIMIT) events.push(use);
  }
}
