import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';

// Tar archives made by hand, for tests of what a receiver refuses: members a real `tar` would not write
// from a task folder (links, `..` paths), or damaged ones.

export interface HandMember {
  name: string;
  /** '0' file (default), '5' folder, '1' hard link, '2' symbolic link, 'x' pax header... */
  type?: string;
  content?: string | Buffer;
  linkName?: string;
}

/** One ustar header block with a valid checksum. */
export function tarHeader(name: string, type: string, size: number, linkName = ''): Buffer {
  const block = Buffer.alloc(512);
  block.write(name, 0, 100, 'utf8');
  block.write('0000640\0', 100, 'latin1');
  block.write('0000000\0', 108, 'latin1');
  block.write('0000000\0', 116, 'latin1');
  block.write(size.toString(8).padStart(11, '0') + '\0', 124, 'latin1');
  block.write('00000000000\0', 136, 'latin1');
  block.write(type, 156, 'latin1');
  block.write(linkName, 157, 100, 'utf8');
  block.write('ustar\0', 257, 'latin1');
  block.write('00', 263, 'latin1');
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 'latin1');
  return block;
}

/** A whole archive: each member's header and padded content, then the end-of-archive marker. */
export function handTar(members: HandMember[]): Buffer {
  const parts = members.flatMap(({ name, type = '0', content = '', linkName }) => {
    const data = Buffer.from(content);
    return [tarHeader(name, type, data.length, linkName), data, Buffer.alloc((512 - (data.length % 512)) % 512)];
  });
  return Buffer.concat([...parts, Buffer.alloc(1024)]);
}

export async function collect(stream: Readable | AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

export function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Feeds a buffer in chunks of `size` bytes, to exercise reads across chunk borders. */
export async function* chunked(data: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let offset = 0; offset < data.length; offset += size) yield data.subarray(offset, offset + size);
}
