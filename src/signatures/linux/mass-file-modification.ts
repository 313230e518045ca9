import { entropy } from '../../formats/binary-reader.js';
import type { BehaviorEvent } from '../../report/events.js';
import type { DroppedFile } from '../../report/report-types.js';
import { openAccess } from '../helpers/file-access.js';
import { headOf } from '../helpers/file-search.js';
import { Signature, type EventOf, type SignatureContext, type SignatureInfo } from '../signature.js';

type Kind = 'file.open' | 'file.write';

/** Files whose content must be rewritten in place before it looks like encryption rather than editing. */
const MIN_FILES = 10;
/** Paths followed at most: a log touching millions of files must not hold them all. */
const MAX_PATHS = 20_000;
const O_APPEND = 0o2000;
const O_ACCMODE = 0o3;
const O_WRONLY = 0o1;
const O_RDWR = 0o2;
const O_CREAT = 0o100;
/** Kernel and device files are no one's documents. */
const NOT_A_DOCUMENT = /^\/(proc|sys|dev|run)\//;

/** Formats that are dense by nature: rewriting them in place (optimisers, tag editors) is no sign of encryption. */
const DENSE_FORMAT = /\b(JPEG|PNG|GIF|TIFF|WebP|PDF|Zip|gzip|bzip2|XZ|7-zip|RAR|Zstandard|Ogg|MPEG|ISO Media|Audio|video|SQLite|ELF|PE32|font)\b/i;
/** Bytes of each kept file looked at. */
const SAMPLE_BYTES = 64 * 1024;

/**
 * Whether the content a file was rewritten with looks scrambled: as dense as its size allows (encryption
 * output) and of no dense format. A file that was not kept (or cannot be read) counts: nothing says otherwise.
 */
async function scrambled(kept: DroppedFile | undefined): Promise<boolean> {
  if (!kept?.path) return true;
  if (DENSE_FORMAT.test(kept.type)) return false;
  const head = await headOf(kept.path, SAMPLE_BYTES);
  if (!head || head.length === 0) return head === null;
  return entropy(head) >= 0.85 * Math.min(8, Math.log2(head.length));
}

async function anyScrambled(versions: DroppedFile[] | undefined): Promise<boolean> {
  if (!versions) return scrambled(undefined);
  for (const version of versions) if (await scrambled(version)) return true;
  return false;
}

interface FileState {
  /** The open that gave the process the file's content (a read, or a read-write open of an existing file). */
  read?: BehaviorEvent;
  /** An in-place open for writing that did not truncate, waiting for its first write. */
  pending?: BehaviorEvent;
  rewritten?: BehaviorEvent[];
}

/**
 * Mass modification of files: many files each read and then rewritten in place (reopened for writing and
 * truncated, or opened read-write and written, never appended to), which is how ransomware encrypts a disk
 * without renaming anything. What sets it apart from ordinary work that writes many files: a build or an
 * archive extraction creates new files (or replaces them without reading them first), a copy reads one file
 * and writes another; none of them reads a file's content and writes it back over the same file. Editing in
 * place (perl -pi, formatters, image optimisers) does, but leaves readable text or a dense format one can
 * name: a rewritten file whose kept copy (among the dropped files) is either does not count.
 */
export class MassFileModification extends Signature<Kind> {
  readonly info: SignatureInfo = {
    name: 'mass_file_modification',
    description: 'Mass modification of files: reads many files and rewrites each in place with unrecognisable content, as ransomware encrypting them does',
    severity: 5,
    categories: ['ransomware'],
    ttp: ['T1486'],
  };
  override readonly kinds: readonly Kind[] = ['file.open', 'file.write'];

  readonly #files = new Map<string, FileState>();
  #rewritten = 0;

  override onEvent(event: EventOf<Kind>): void {
    // Only files the sample has read can be rewritten in place: a write or a write-only open of any other
    // file (most of what busy programs do) costs one lookup.
    const known = this.#files.get(event.path);
    if (event.kind === 'file.write') {
      if (known?.pending && !known.rewritten) this.#rewrite(known, [known.read ?? known.pending, known.pending, event]);
      return;
    }
    if (event.ret < 0 || known?.rewritten || (!known && (event.flags & O_ACCMODE) === O_WRONLY) || NOT_A_DOCUMENT.test(event.path)) return;
    const state = known ?? this.#stateOf(event.path);
    if (state) this.#open(event, state);
  }

  override async onComplete(ctx: SignatureContext): Promise<void> {
    if (this.#rewritten < MIN_FILES) return;
    // A file may be kept in several versions (before and after it was rewritten): any scrambled one counts.
    const kept = new Map<string, DroppedFile[]>();
    for (const dropped of ctx.report.dropped ?? []) kept.set(dropped.filepath, [...(kept.get(dropped.filepath) ?? []), dropped]);
    const rewritten: BehaviorEvent[][] = [];
    for (const [path, state] of this.#files) {
      if (state.rewritten && (await anyScrambled(kept.get(path)))) rewritten.push(state.rewritten);
    }
    if (rewritten.length < MIN_FILES) return;
    this.markIoc('files', String(rewritten.length), `${rewritten.length} files read and rewritten in place with scrambled content`);
    for (const events of rewritten) for (const event of events) this.markEvent(event, ctx);
  }

  #open(event: EventOf<'file.open'>, state: FileState): void {
    const access = openAccess(event.flags);
    const readWrite = (event.flags & O_ACCMODE) === O_RDWR;
    // A read-write open that may have created the file shows no content read.
    const readsExisting = access.includes('read') && !(readWrite && event.flags & O_CREAT);
    const readBefore = state.read;
    if (readsExisting && !state.read) state.read = event;
    if (!access.includes('write') || event.flags & O_APPEND) return;
    const inPlace = readBefore !== undefined || (readWrite && readsExisting);
    if (!inPlace) return;
    if (access.includes('truncate')) this.#rewrite(state, [state.read ?? event, event]);
    else state.pending = event;
  }

  #rewrite(state: FileState, events: BehaviorEvent[]): void {
    state.rewritten = [...new Set(events)];
    delete state.pending;
    this.#rewritten++;
  }

  #stateOf(path: string): FileState | undefined {
    let state = this.#files.get(path);
    if (!state && this.#files.size < MAX_PATHS) this.#files.set(path, (state = {}));
    return state;
  }
}
