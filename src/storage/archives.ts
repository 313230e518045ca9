import { type ChildProcess, spawn } from 'node:child_process';
import { type FileHandle, mkdir, open, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Config } from '../config/schema.js';
import { invalidInput, isNestboxError, type NestboxError } from '../errors.js';
import { type FileHashes, MultiHasher } from './hashing.js';

/**
 * Unpacking of submitted archives with the system's 7-Zip, safely:
 * - the listing (`7z l -slt`) is checked against the file-count and size limits before anything is
 *   unpacked, so an ordinary zip bomb costs nothing;
 * - content is read from 7-Zip's standard output (`7z x -so`) and cut into files by nestbox itself, by
 *   the sizes of the listing, so 7-Zip never writes to disk: no path in an archive (absolute, `..`,
 *   through a symlink) can reach outside the private work folder, and links and devices become nothing;
 * - every byte is counted while unpacking and the listed sizes and CRCs must match exactly, so an
 *   archive that lies in its listing is refused as soon as it writes more than it announced.
 */

export type ArchiveKind = 'zip' | '7z' | 'tar' | 'gzip' | 'bzip2' | 'xz';

/** Recognised by libmagic's description. Office documents, JARs and APKs are zips with their own type. */
const KIND_OF_TYPE: ReadonlyArray<[RegExp, ArchiveKind]> = [
  [/^Zip archive data/, 'zip'],
  [/^7-zip archive data/, '7z'],
  [/^(POSIX )?tar archive/, 'tar'],
  [/^gzip compressed data/, 'gzip'],
  [/^bzip2 compressed data/, 'bzip2'],
  [/^XZ compressed data/, 'xz'],
];

/** Formats holding one compressed stream: their listed size is only a hint (gzip keeps it modulo 2^32). */
const SINGLE_STREAM: ReadonlySet<ArchiveKind> = new Set(['gzip', 'bzip2', 'xz']);

export function archiveKindOf(fileType: string): ArchiveKind | undefined {
  return KIND_OF_TYPE.find(([pattern]) => pattern.test(fileType))?.[1];
}

export interface ArchiveLimits {
  /** Tried in order on encrypted archives. */
  passwords: readonly string[];
  /** How many archive levels are opened; an archive deeper than that is kept as a file. */
  maxDepth: number;
  /** Bytes all files unpacked from one submitted archive may add up to. */
  maxTotalSize: number;
  /** Files one submitted archive may unpack to, nested archives included. */
  maxFiles: number;
}

/** The limits as configured (the `archives` section). */
export function archiveLimits(archives: Config['archives']): ArchiveLimits {
  return { passwords: archives.passwords, maxDepth: archives.max_depth, maxTotalSize: archives.max_total_size, maxFiles: archives.max_files };
}

export interface UnpackedFile {
  /** Where the file is, inside the work folder. */
  path: string;
  /** Its path inside the archive(s), for messages: `outer.zip/dir/inner.tar/file.exe`. */
  name: string;
  /** Its path inside the submitted archive, without `.` steps: `dir/inner.tar/file.exe`. */
  member: string;
  /** The last component of its path, made safe for a file system. */
  baseName: string;
  fileType: string;
  hashes: FileHashes;
}

export type TypeDetector = (path: string) => Promise<string>;

/**
 * Unpacks an archive, and the archives inside it up to `limits.maxDepth` levels, into `workDir` (which
 * the caller owns and removes). Returns every regular file found, in archive order. A refusal (limits,
 * unknown password, damaged archive) is an invalid_input error whose message names the archive.
 */
export async function unpackArchive(
  archive: { path: string; name: string; kind: ArchiveKind },
  workDir: string,
  limits: ArchiveLimits,
  detectType: TypeDetector,
): Promise<UnpackedFile[]> {
  const found = await new Unpacking(workDir, limits, detectType).unpack(archive.path, archive.name, archive.kind, 1);
  return found.map((file) => ({ ...file, member: memberPath(file.name.slice(archive.name.length + 1)) }));
}

/** `./dir//x` is `dir/x`. */
function memberPath(path: string): string {
  return path.split('/').filter((step) => step !== '.' && step !== '').join('/');
}

interface Entry {
  path: string;
  /** Bytes 7-Zip writes for this entry on -so; undefined when unknown (single-stream formats). */
  size: number | undefined;
  listedSize: number | undefined;
  crc: string | undefined;
  regular: boolean;
  encrypted: boolean;
}

interface Extracted {
  path: string;
  name: string;
  baseName: string;
  hashes: FileHashes;
}

/** The part of the limits not yet used by this submission's archive tree. */
interface Budget {
  bytes: number;
  files: number;
}

class Unpacking {
  private readonly budget: Budget;
  private nextId = 0;

  constructor(
    private readonly workDir: string,
    private readonly limits: ArchiveLimits,
    private readonly detectType: TypeDetector,
  ) {
    this.budget = { bytes: limits.maxTotalSize, files: limits.maxFiles };
  }

  async unpack(path: string, name: string, kind: ArchiveKind, depth: number): Promise<Array<Omit<UnpackedFile, 'member'>>> {
    const found: Array<Omit<UnpackedFile, 'member'>> = [];
    for (const file of await this.extract(path, name, kind)) {
      const fileType = await this.detectType(file.path);
      const nestedKind = archiveKindOf(fileType);
      if (nestedKind !== undefined && depth < this.limits.maxDepth) {
        found.push(...(await this.unpack(file.path, file.name, nestedKind, depth + 1)));
        await rm(file.path, { force: true });
      } else {
        found.push({ ...file, fileType });
      }
    }
    return found;
  }

  private async extract(path: string, name: string, kind: ArchiveKind): Promise<Extracted[]> {
    const { entries, password } = await this.list(path, name, kind);
    this.checkListing(entries, name);
    const encrypted = entries.some((entry) => entry.encrypted);
    const candidates = encrypted ? [password, ...this.passwords().filter((p) => p !== password)] : [password];
    let failure = '';
    for (const candidate of candidates) {
      const outcome = await this.extractWith(path, name, kind, entries, candidate);
      if (typeof outcome !== 'string') return outcome;
      failure = outcome;
    }
    if (encrypted) throw refused(name, 'is encrypted and none of the configured archive passwords opens it');
    throw refused(name, `could not be unpacked: ${failure}`);
  }

  private passwords(): string[] {
    return this.limits.passwords.length > 0 ? [...this.limits.passwords] : [''];
  }

  /** The listing, opened with the first password that works (7z archives may encrypt their listing). */
  private async list(path: string, name: string, kind: ArchiveKind): Promise<{ entries: Entry[]; password: string }> {
    let failure = '';
    for (const password of this.passwords()) {
      const result = await this.listWith(path, kind, password, name);
      if (typeof result !== 'string') return { entries: result, password };
      failure = result;
      if (!/wrong password|encrypted/i.test(failure)) break;
    }
    if (/wrong password|encrypted/i.test(failure)) {
      throw refused(name, 'is encrypted and none of the configured archive passwords opens it');
    }
    throw refused(name, `could not be read: ${failure}`);
  }

  /** Parses `7z l -slt -ba` blocks ("Key = value" lines, a blank line between entries). */
  private async listWith(path: string, kind: ArchiveKind, password: string, name: string): Promise<Entry[] | string> {
    const child = run7z(['l', '-slt', '-ba', `-t${kind}`, `-p${password}`, '--', path]);
    const entries: Entry[] = [];
    let block = new Map<string, string>();
    const maxEntries = this.limits.maxFiles * 4 + 1000;
    let tooMany = false;
    const flush = () => {
      if (block.size > 0) entries.push(toEntry(block, kind, basename(name)));
      block = new Map();
    };
    for await (const line of createInterface({ input: child.process.stdout! })) {
      if (line === '') flush();
      else {
        const eq = line.indexOf(' = ');
        if (eq > 0) block.set(line.slice(0, eq), line.slice(eq + 3));
        else if (line.endsWith(' =')) block.set(line.slice(0, -2), '');
      }
      if (entries.length > maxEntries) {
        tooMany = true;
        child.process.kill('SIGKILL');
        break;
      }
    }
    flush();
    const { code, stderr } = await child.done;
    if (tooMany) throw refused(name, `holds more than ${this.limits.maxFiles} files (archives.max_files); refused`);
    return code === 0 ? entries : stderrSummary(stderr, { path, name });
  }

  private checkListing(entries: readonly Entry[], name: string): void {
    const files = entries.filter((entry) => entry.regular);
    if (files.length > this.budget.files) {
      throw refused(name, `holds more than ${this.limits.maxFiles} files (archives.max_files); refused`);
    }
    const listedBytes = entries.reduce((sum, entry) => sum + (entry.listedSize ?? 0), 0);
    if (listedBytes > this.budget.bytes) throw this.overSize(name);
    const unknown = entries.filter((entry) => entry.size === undefined);
    if (unknown.length > 0 && entries.length > 1) throw refused(name, 'could not be unpacked: its listing gives no file sizes');
  }

  private overSize(name: string): NestboxError {
    return refused(name, `unpacks to more than ${this.limits.maxTotalSize} bytes (archives.max_total_size); refused`);
  }

  /** Returns the files, or a reason why this password did not work; throws a refusal. */
  private async extractWith(path: string, name: string, kind: ArchiveKind, entries: readonly Entry[], password: string): Promise<Extracted[] | string> {
    const child = run7z(['x', '-so', '-y', `-t${kind}`, `-p${password}`, '--', path]);
    const budgetBefore = { ...this.budget };
    const sink = new EntrySink(entries, name, this.budget, () => this.newFileDir(), () => this.overSize(name));
    let problem: unknown;
    try {
      for await (const chunk of child.process.stdout!) await sink.write(chunk as Buffer);
      await sink.finish();
    } catch (error) {
      problem = error;
      child.process.kill('SIGKILL');
    }
    const { code, stderr } = await child.done;
    const failure =
      problem !== undefined ? problem : code !== 0 ? stderrSummary(stderr, { path, name }) : sink.checksumProblem();
    if (failure === undefined) return sink.files;
    await sink.discard();
    if (isNestboxError(failure)) throw failure;
    // A failed attempt (wrong password) must not use up the limits of the next one.
    Object.assign(this.budget, budgetBefore);
    return failure instanceof Error ? failure.message : String(failure);
  }

  private async newFileDir(): Promise<string> {
    const dir = join(this.workDir, `e${this.nextId++}`);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    return dir;
  }
}

/** Writes 7-Zip's concatenated output into one file per regular entry, by the listed sizes. */
class EntrySink {
  readonly files: Extracted[] = [];
  private readonly actualCrc = new Map<number, string>();
  private index = -1;
  private remaining = 0;
  private handle: FileHandle | undefined;
  private hasher: MultiHasher | undefined;
  private current: Omit<Extracted, 'hashes'> | undefined;

  constructor(
    private readonly entries: readonly Entry[],
    private readonly archiveName: string,
    private readonly budget: Budget,
    private readonly newDir: () => Promise<string>,
    private readonly overSize: () => NestboxError,
  ) {}

  async write(chunk: Buffer): Promise<void> {
    let offset = 0;
    while (offset < chunk.length) {
      if (this.remaining === 0) await this.openNext(true);
      const piece = chunk.subarray(offset, offset + Math.min(this.remaining, chunk.length - offset));
      if (piece.length > this.budget.bytes) throw this.overSize();
      this.budget.bytes -= piece.length;
      this.hasher?.update(piece);
      if (this.handle) await this.handle.write(piece);
      this.remaining -= piece.length;
      offset += piece.length;
    }
  }

  /** Closes the last entry; entries never reached must be empty ones. */
  async finish(): Promise<void> {
    if (this.remaining !== 0 && this.remaining !== Infinity) throw new Error('the archive ended before its listed content');
    await this.closeCurrent();
    while (this.index + 1 < this.entries.length) {
      const next = this.entries[this.index + 1];
      if (next.size === undefined) await this.openNext(false);
      else if (next.size === 0) await this.openNext(false);
      else throw new Error('the archive ended before its listed content');
      await this.closeCurrent();
    }
  }

  /** A listed CRC that does not match what was unpacked (a wrong password or a damaged archive). */
  checksumProblem(): string | undefined {
    for (const [index, crc] of this.actualCrc) {
      const listed = this.entries[index].crc;
      if (listed !== undefined && listed !== crc) return `checksum mismatch for ${this.entries[index].path}`;
    }
    return undefined;
  }

  async discard(): Promise<void> {
    await this.handle?.close().catch(() => undefined);
    this.handle = undefined;
    await Promise.all(this.files.map((file) => rm(file.path, { force: true })));
    if (this.current) await rm(this.current.path, { force: true });
  }

  /** Moves to the next entry that 7-Zip writes bytes for; zero-length regular entries become empty files. */
  private async openNext(needsBytes: boolean): Promise<void> {
    await this.closeCurrent();
    for (;;) {
      this.index++;
      const entry = this.entries[this.index];
      if (entry === undefined) throw new Error('the archive holds more content than its listing says');
      this.remaining = entry.size ?? Infinity;
      if (entry.regular) await this.startFile(entry);
      if (this.remaining > 0 || !needsBytes) return;
      await this.closeCurrent();
    }
  }

  private async startFile(entry: Entry): Promise<void> {
    if (this.budget.files === 0) throw refused(this.archiveName, `holds more files than archives.max_files allows; refused`);
    this.budget.files--;
    const baseName = safeEntryName(entry.path);
    const path = join(await this.newDir(), baseName);
    this.handle = await open(path, 'wx', 0o640);
    this.hasher = new MultiHasher(entry.size);
    this.current = { path, name: `${this.archiveName}/${entry.path}`, baseName };
  }

  private async closeCurrent(): Promise<void> {
    if (!this.current || !this.hasher) return;
    await this.handle?.close();
    this.handle = undefined;
    const hashes = this.hasher.digest();
    this.actualCrc.set(this.index, hashes.crc32);
    this.files.push({ ...this.current, hashes });
    this.current = undefined;
    this.hasher = undefined;
  }
}

/** `archiveBase` names the content of a single-stream file whose listing has no name (bzip2). */
function toEntry(block: Map<string, string>, kind: ArchiveKind, archiveBase: string): Entry {
  const listedSize = parseSize(block.get('Size'));
  const folder = block.get('Folder') === '+' || /^D/.test(block.get('Attributes') ?? '');
  const link = Boolean(block.get('Symbolic Link')) || Boolean(block.get('Hard Link'));
  const unixType = /(?:^|\s)([-dlcbps])[-rwxsStT]{9}$/.exec((block.get('Mode') || block.get('Attributes') || '').trim())?.[1];
  const crc = block.get('CRC');
  return {
    path: block.get('Path') || streamName(archiveBase),
    size: SINGLE_STREAM.has(kind) ? undefined : (listedSize ?? 0),
    listedSize,
    crc: !SINGLE_STREAM.has(kind) && crc && /^[0-9A-F]{8}$/.test(crc) ? crc : undefined,
    regular: !folder && !link && (unixType === undefined || unixType === '-'),
    encrypted: block.get('Encrypted') === '+',
  };
}

/** `x.tar.bz2` holds `x.tar`, `x.tgz` holds `x.tar`. */
function streamName(archiveBase: string): string {
  if (/\.t[gbx]z2?$/i.test(archiveBase)) return archiveBase.replace(/\.t[gbx]z2?$/i, '.tar');
  const dot = archiveBase.lastIndexOf('.');
  return dot > 0 ? archiveBase.slice(0, dot) : archiveBase;
}

function parseSize(text: string | undefined): number | undefined {
  return text && /^\d+$/.test(text) ? Number(text) : undefined;
}

/** The last path component, usable as a file name: no separators, control characters or `..`, ≤ 200 bytes. */
export function safeEntryName(path: string): string {
  const last = path.split(/[\\/]/).pop() ?? '';
  let name = last.replace(/[\u0000-\u001f\u007f]/g, '_');
  if (name === '' || name === '.' || name === '..') return 'file';
  while (Buffer.byteLength(name) > 200) name = shorten(name);
  return name;
}

/** Drops a character before the extension, so `very...long.exe` stays an `.exe`. */
function shorten(name: string): string {
  const dot = name.lastIndexOf('.');
  const cut = dot > 0 && name.length - dot <= 16 ? dot : name.length;
  const chars = [...name.slice(0, cut)];
  chars.pop();
  return chars.join('') + name.slice(cut);
}

function refused(name: string, what: string): NestboxError {
  return invalidInput(`${name}: ${what}`, { context: { archive: name } });
}

interface Run {
  process: ChildProcess;
  done: Promise<{ code: number | null; stderr: string }>;
}

function run7z(args: string[]): Run {
  // -bd: no progress; -sccUTF-8: names in UTF-8; stdin closed so 7-Zip can never wait for a password.
  const child = spawn('7z', [args[0], '-bd', '-sccUTF-8', ...args.slice(1)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, LC_ALL: 'C.UTF-8' },
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4096);
  });
  const done = new Promise<{ code: number | null; stderr: string }>((resolve) => {
    child.on('error', (error) => resolve({ code: -1, stderr: error.message }));
    child.on('close', (code) => resolve({ code, stderr }));
  });
  return { process: child, done };
}

/**
 * The first lines of 7-Zip's complaint, for a message sent to the client. 7-Zip names the archive by the
 * path it was given, a server path; that becomes the archive's own name, and lines that then only
 * repeat the name are dropped (the message starts with it already).
 */
function stderrSummary(stderr: string, archive: { path: string; name: string }): string {
  const lines = stderr
    .split('\n')
    .map((line) => line.split(archive.path).join(archive.name).trim())
    .filter((line) => !onlyNames(line, archive.name) && !/^(ERRORS?:|Errors: \d+)$/.test(line));
  return lines.slice(0, 3).join('; ') || '7-Zip failed';
}

/** `ERROR: x.7z : x.7z`, `x.7z` or an empty line. */
function onlyNames(line: string, name: string): boolean {
  return line.split(name).join('').replace(/ERROR:|:/g, '').trim() === '';
}
