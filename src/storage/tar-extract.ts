import { type FileHandle, mkdir, open } from 'node:fs/promises';
import { join } from 'node:path';
import { invalidInput, type NestboxError, tooLarge } from '../errors.js';

/**
 * Unpacks a tar archive that comes from another host (a worker's task folder) into an empty folder, with
 * nothing trusted: only folders and regular files are accepted (a link, device or fifo refuses the whole
 * archive), a member named absolutely or with a `..` step is refused, every header's checksum must hold,
 * and the archive must end with its end-of-archive marker, so a stream cut off between two members is
 * refused too. Because no link is ever created, no member can reach outside the folder.
 *
 * Reads ustar members with GNU long names (`L`) and pax headers (`x`, `g`), which GNU tar writes.
 */

export interface TarLimits {
  /** Bytes all files together may hold. */
  maxBytes: number;
  /** Files and folders the archive may hold. */
  maxEntries: number;
}

export interface ExtractedTar {
  files: number;
  folders: number;
  /** Bytes of all files together. */
  bytes: number;
}

const BLOCK = 512;
/** Pax and long-name headers are a few names; anything longer is not from tar. */
const MAX_META = 64 * 1024;

/** Unpacks `source` into `root` (an existing empty folder). Reads the source to its end. */
export async function extractTar(source: AsyncIterable<Uint8Array>, root: string, limits: TarLimits): Promise<ExtractedTar> {
  const reader = new BlockReader(source);
  const extraction = new Extraction(root, limits);
  let pending: PendingMeta = {};
  for (;;) {
    const block = await reader.exactly(BLOCK);
    if (block === undefined) throw refused('ends before its end-of-archive marker (cut off?)');
    if (isZero(block)) break;
    const header = parseHeader(block);
    if (header.type === 'x' || header.type === 'g' || header.type === 'L' || header.type === 'K') {
      const meta = await readMeta(reader, header.size);
      if (header.type === 'x') pending = { ...pending, ...paxFields(meta) };
      if (header.type === 'L') pending = { ...pending, path: cString(meta) };
      continue;
    }
    const member = { ...header, path: pending.path ?? header.path, size: pending.size ?? header.size };
    pending = {};
    await extraction.add(member, reader);
  }
  await reader.drainZeros();
  return extraction.summary();
}

interface Header {
  path: string;
  type: string;
  size: number;
}

interface PendingMeta {
  path?: string;
  size?: number;
}

class Extraction {
  private readonly counts: ExtractedTar = { files: 0, folders: 0, bytes: 0 };

  constructor(
    private readonly root: string,
    private readonly limits: TarLimits,
  ) {}

  async add(member: Header, reader: BlockReader): Promise<void> {
    const steps = memberSteps(member.path);
    if (this.counts.files + this.counts.folders >= this.limits.maxEntries) {
      throw tooLarge(`The archive holds more than ${this.limits.maxEntries} entries (cluster.results_max_entries)`);
    }
    if (member.type === '5') {
      if (member.size !== 0) throw refused(`has a folder with content: ${member.path}`);
      if (steps.length > 0) await this.folder(steps);
      return;
    }
    if (member.type !== '0' && member.type !== '\0' && member.type !== '7') {
      throw refused(`holds ${kindOf(member.type)} (${member.path}); only files and folders are accepted`);
    }
    if (steps.length === 0) throw refused('has a file without a name');
    if (this.counts.bytes + member.size > this.limits.maxBytes) {
      throw tooLarge(`The archive holds more than ${this.limits.maxBytes} bytes (cluster.results_limit)`);
    }
    await this.file(steps, member.size, reader);
  }

  summary(): ExtractedTar {
    return { ...this.counts };
  }

  private async folder(steps: string[]): Promise<void> {
    await this.ensureFolder(steps);
    this.counts.folders++;
  }

  /** Folders come before their files in tar's order, but need not: parents are made as needed. */
  private async ensureFolder(steps: string[]): Promise<void> {
    await mkdir(join(this.root, ...steps), { recursive: true, mode: 0o750 }).catch((error) => {
      throw refused(`has a folder where a file is: ${steps.join('/')}`, error);
    });
  }

  private async file(steps: string[], size: number, reader: BlockReader): Promise<void> {
    if (steps.length > 1) await this.ensureFolder(steps.slice(0, -1));
    const path = join(this.root, ...steps);
    let handle: FileHandle;
    try {
      handle = await open(path, 'wx', 0o640);
    } catch (error) {
      throw refused(`names a file twice or over a folder: ${steps.join('/')}`, error);
    }
    try {
      for await (const chunk of reader.take(size)) await handle.write(chunk);
    } finally {
      await handle.close();
    }
    await reader.skip(padding(size));
    this.counts.files++;
    this.counts.bytes += size;
  }
}

/** The member's path as folder steps; `.` steps and a trailing `/` drop out, anything leaving the root is refused. */
export function memberSteps(path: string): string[] {
  if (path.startsWith('/')) throw refused(`names an absolute path: ${path}`);
  const steps = path.split('/').filter((step) => step !== '' && step !== '.');
  if (steps.includes('..')) throw refused(`names a path outside its folder: ${path}`);
  return steps;
}

function parseHeader(block: Buffer): Header {
  if (!checksumHolds(block)) throw refused('has a damaged header (its checksum does not match)');
  const name = cString(block.subarray(0, 100));
  const ustar = block.toString('latin1', 257, 262) === 'ustar';
  const prefix = ustar ? cString(block.subarray(345, 500)) : '';
  const type = String.fromCharCode(block[156]!);
  return { path: prefix === '' ? name : `${prefix}/${name}`, type, size: numberField(block.subarray(124, 136)) };
}

function checksumHolds(block: Buffer): boolean {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : block[i]!;
  return sum === numberField(block.subarray(148, 156));
}

/** An octal field, or GNU's base-256 form (high bit set) for sizes past 8 GiB. */
function numberField(field: Buffer): number {
  if ((field[0]! & 0x80) !== 0) {
    let value = field[0]! & 0x7f;
    for (let i = 1; i < field.length; i++) value = value * 256 + field[i]!;
    if (!Number.isSafeInteger(value)) throw refused('has a size too large to be real');
    return value;
  }
  const text = cString(field).trim();
  if (!/^[0-7]*$/.test(text)) throw refused('has a damaged header (a number is not octal)');
  return text === '' ? 0 : parseInt(text, 8);
}

/** Pax records: `<length> <key>=<value>\n`. Only `path` and `size` matter here. */
export function paxFields(data: Buffer): PendingMeta {
  const fields: PendingMeta = {};
  let offset = 0;
  while (offset < data.length) {
    const space = data.indexOf(0x20, offset);
    const length = Number(data.toString('latin1', offset, space));
    if (space < 0 || !Number.isSafeInteger(length) || length <= space - offset || offset + length > data.length) {
      throw refused('has a damaged pax header');
    }
    const record = data.toString('utf8', space + 1, offset + length - 1);
    const eq = record.indexOf('=');
    const key = record.slice(0, eq);
    const value = record.slice(eq + 1);
    if (key === 'path') fields.path = value;
    if (key === 'size') {
      if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) throw refused('has a damaged pax size');
      fields.size = Number(value);
    }
    offset += length;
  }
  return fields;
}

async function readMeta(reader: BlockReader, size: number): Promise<Buffer> {
  if (size > MAX_META) throw refused('has an extended header too long to be real');
  const data = await reader.exactly(size);
  if (data === undefined) throw refused('ends inside an extended header (cut off?)');
  await reader.skip(padding(size));
  return data;
}

function kindOf(type: string): string {
  const kinds: Record<string, string> = { '1': 'a hard link', '2': 'a symbolic link', '3': 'a device', '4': 'a device', '6': 'a fifo' };
  return kinds[type] ?? `an entry of type ${JSON.stringify(type)}`;
}

function cString(data: Buffer): string {
  const end = data.indexOf(0);
  return data.toString('utf8', 0, end < 0 ? data.length : end);
}

function isZero(block: Buffer): boolean {
  return block.every((byte) => byte === 0);
}

function padding(size: number): number {
  return (BLOCK - (size % BLOCK)) % BLOCK;
}

function asBuffer(data: Uint8Array): Buffer {
  return Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.length);
}

function refused(what: string, cause?: unknown): NestboxError {
  return invalidInput(`The results archive ${what}`, cause === undefined ? undefined : { cause });
}

/** Exact reads over a stream of chunks of any size. */
class BlockReader {
  private readonly iterator: AsyncIterator<Uint8Array>;
  private buffered: Buffer = Buffer.alloc(0);

  constructor(source: AsyncIterable<Uint8Array>) {
    this.iterator = source[Symbol.asyncIterator]();
  }

  /** The next `size` bytes, or undefined when the stream ends first. */
  async exactly(size: number): Promise<Buffer | undefined> {
    while (this.buffered.length < size) {
      const next = await this.iterator.next();
      if (next.done) return undefined;
      this.buffered = this.buffered.length === 0 ? asBuffer(next.value) : Buffer.concat([this.buffered, next.value]);
    }
    const data = this.buffered.subarray(0, size);
    this.buffered = this.buffered.subarray(size);
    return data;
  }

  /** The next `size` bytes as they arrive, without holding them. */
  async *take(size: number): AsyncGenerator<Buffer> {
    let left = size;
    while (left > 0) {
      if (this.buffered.length === 0) {
        const next = await this.iterator.next();
        if (next.done) throw refused('ends inside a file (cut off?)');
        this.buffered = asBuffer(next.value);
      }
      const part = this.buffered.subarray(0, left);
      this.buffered = this.buffered.subarray(part.length);
      left -= part.length;
      yield part;
    }
  }

  async skip(size: number): Promise<void> {
    if (size > 0 && (await this.exactly(size)) === undefined) throw refused('ends inside its padding (cut off?)');
  }

  /** After the end marker tar pads with zeros to its record size; anything else is not an archive's. */
  async drainZeros(): Promise<void> {
    if (!isZero(this.buffered)) throw refused('has data after its end-of-archive marker');
    this.buffered = Buffer.alloc(0);
    for (;;) {
      const next = await this.iterator.next();
      if (next.done) return;
      if (!isZero(asBuffer(next.value))) {
        throw refused('has data after its end-of-archive marker');
      }
    }
  }
}
