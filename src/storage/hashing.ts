import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { SsdeepHasher } from './ssdeep.js';

/** Every hash Cuckoo records for a sample. */
export interface FileHashes {
  size: number;
  md5: string;
  sha1: string;
  sha256: string;
  sha512: string;
  /** 8 uppercase hex digits, as Cuckoo writes it. */
  crc32: string;
  /** null only for inputs longer than ssdeep can hash. */
  ssdeep: string | null;
}

/**
 * Computes all hashes of a byte stream in one pass: feed chunks with update(), then call digest() once.
 * `maxSize` is an optional promise that the stream is no longer (see SsdeepHasher); it makes ssdeep faster.
 */
export class MultiHasher {
  private readonly digests: Record<'md5' | 'sha1' | 'sha256' | 'sha512', Hash> = {
    md5: createHash('md5'),
    sha1: createHash('sha1'),
    sha256: createHash('sha256'),
    sha512: createHash('sha512'),
  };
  private readonly fuzzy: SsdeepHasher;
  private crc = 0;
  private size = 0;

  constructor(maxSize?: number) {
    this.fuzzy = new SsdeepHasher(maxSize);
  }

  update(chunk: Uint8Array): void {
    for (const hash of Object.values(this.digests)) hash.update(chunk);
    this.crc = crc32(chunk, this.crc);
    this.fuzzy.update(chunk);
    this.size += chunk.length;
  }

  digest(): FileHashes {
    return {
      size: this.size,
      md5: this.digests.md5.digest('hex'),
      sha1: this.digests.sha1.digest('hex'),
      sha256: this.digests.sha256.digest('hex'),
      sha512: this.digests.sha512.digest('hex'),
      crc32: crcHex(this.crc),
      ssdeep: this.fuzzy.digestText(),
    };
  }
}

export function crcHex(crc: number): string {
  return (crc >>> 0).toString(16).toUpperCase().padStart(8, '0');
}

export async function hashFile(path: string): Promise<FileHashes> {
  const hasher = new MultiHasher((await stat(path)).size);
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 })) hasher.update(chunk as Buffer);
  return hasher.digest();
}

/** The hash a client named by its length (32 md5, 40 sha1, 64 sha256), or undefined. */
export function hashOfLength(hashes: FileHashes, hex: string): string | undefined {
  switch (hex.length) {
    case 32:
      return hashes.md5;
    case 40:
      return hashes.sha1;
    case 64:
      return hashes.sha256;
    default:
      return undefined;
  }
}
