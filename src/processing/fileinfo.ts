import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import { type FileHashes, MultiHasher } from '../storage/hashing.js';
import type { FileInfo } from '../report/report-types.js';
import { openRegularFile } from '../util/safe-open.js';
import { StringScanner, UrlCollector } from './strings.js';
import type { ProcessingTools } from './types.js';

/**
 * Cuckoo's file facts (name, size, hashes, CRC32, ssdeep, libmagic type, YARA matches, embedded URLs)
 * for the files of an analysis (sample, dropped files), hashed exactly as uploads are: one pass of
 * the storage layer's MultiHasher, which also gives ssdeep.
 */

export interface FileDigests extends FileHashes {
  urls: string[];
}

/** Size, digests, CRC32, ssdeep and embedded URLs in one streaming read. */
export async function digestFile(path: string): Promise<FileDigests> {
  const handle = await openRegularFile(path);
  const urls = new UrlCollector();
  const scanner = new StringScanner(urls.sink);
  try {
    const hasher = new MultiHasher((await handle.stat()).size);
    const buffer = Buffer.alloc(1 << 20);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      hasher.update(chunk);
      scanner.push(chunk);
    }
    scanner.end();
    return { ...hasher.digest(), urls: urls.result() };
  } finally {
    await handle.close();
  }
}

/** SHA-256 of a file, streamed. */
export async function sha256File(path: string): Promise<string> {
  const handle = await openRegularFile(path);
  const hash = createHash('sha256');
  try {
    const buffer = Buffer.alloc(1 << 20);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
    }
  } finally {
    await handle.close();
  }
  return hash.digest('hex');
}

export interface DescribeOptions {
  /** File name shown in the report (defaults to the path's base name). */
  name?: string;
  /** Path shown in the report (defaults to the path itself). */
  shownPath?: string | null;
  yara?: boolean;
}

/** The complete FileInfo of one file. */
export async function describeFile(path: string, tools: ProcessingTools, options: DescribeOptions = {}): Promise<FileInfo> {
  const [described] = await describeFiles([{ path, ...options }], tools);
  return described!;
}

/** FileInfo of many files, with one YARA run for all of them. */
export async function describeFiles(
  files: ReadonlyArray<{ path: string } & DescribeOptions>,
  tools: ProcessingTools,
): Promise<FileInfo[]> {
  const digests: FileDigests[] = [];
  for (const file of files) digests.push(await digestFile(file.path));
  const scanned = files.filter((file) => file.yara !== false).map((file) => file.path);
  const yara = scanned.length > 0 ? await tools.yara.scanMany(scanned) : new Map();
  const described: FileInfo[] = [];
  for (const [index, file] of files.entries()) {
    const digest = digests[index]!;
    described.push({
      name: file.name ?? basename(file.path),
      path: file.shownPath === undefined ? file.path : file.shownPath,
      size: digest.size,
      crc32: digest.crc32,
      md5: digest.md5,
      sha1: digest.sha1,
      sha256: digest.sha256,
      sha512: digest.sha512,
      ssdeep: digest.ssdeep,
      type: await tools.fileType.detect(file.path),
      yara: yara.get(file.path) ?? [],
      urls: digest.urls,
    });
  }
  return described;
}
