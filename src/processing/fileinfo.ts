import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import { promisify } from 'node:util';
import { crc32 } from 'node:zlib';
import { internal } from '../errors.js';
import type { FileInfo } from './report-types.js';
import { StringScanner, UrlCollector } from './strings.js';
import type { ProcessingTools } from './types.js';

const run = promisify(execFile);

/**
 * Cuckoo's file facts (name, size, hashes, CRC32, ssdeep, libmagic type, YARA matches, embedded URLs)
 * for files of an analysis. Uploads are hashed by the storage layer; this module hashes the files a
 * task produced (sample copy, dropped files, dumps) the same way: the digests are hex, CRC32 is eight
 * uppercase hex digits, ssdeep comes from the ssdeep CLI.
 */

export interface FileDigests {
  size: number;
  md5: string;
  sha1: string;
  sha256: string;
  sha512: string;
  crc32: string;
  urls: string[];
}

/**
 * Opens a file written by or for the sample without following a symbolic link and refuses anything
 * that is not a regular file, so a planted link or FIFO can neither expose host files nor hang us.
 */
export async function openRegularFile(path: string): Promise<FileHandle> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  const stats = await handle.stat();
  if (!stats.isFile()) {
    await handle.close();
    throw internal(`not a regular file: ${path}`, { context: { path } });
  }
  return handle;
}

/** Size, digests, CRC32 and embedded URLs in one streaming read. */
export async function digestFile(path: string): Promise<FileDigests> {
  const handle = await openRegularFile(path);
  const hashes = ['md5', 'sha1', 'sha256', 'sha512'].map((algorithm) => createHash(algorithm));
  const urls = new UrlCollector();
  const scanner = new StringScanner(urls.sink);
  let crc = 0;
  let size = 0;
  try {
    const buffer = Buffer.alloc(1 << 20);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      for (const hash of hashes) hash.update(chunk);
      crc = crc32(chunk, crc);
      scanner.push(chunk);
      size += bytesRead;
    }
    scanner.end();
  } finally {
    await handle.close();
  }
  const [md5, sha1, sha256, sha512] = hashes.map((hash) => hash.digest('hex')) as [string, string, string, string];
  return { size, md5, sha1, sha256, sha512, crc32: crc.toString(16).toUpperCase().padStart(8, '0'), urls: urls.result() };
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

/**
 * ssdeep digests from the ssdeep CLI, many files per run. The CLI prints `digest,"path"` per file; a
 * path it could not read is simply missing, and maps to null.
 */
export async function ssdeepMany(paths: readonly string[]): Promise<Map<string, string | null>> {
  const digests = new Map<string, string | null>(paths.map((path) => [path, null]));
  const plain = paths.filter((path) => !/["\n\r]/.test(path));
  for (let i = 0; i < plain.length; i += 200) {
    const batch = plain.slice(i, i + 200);
    const { stdout } = await run('ssdeep', ['-s', '--', ...batch], { maxBuffer: 64 << 20 }).catch((error: { stdout?: string }) => ({
      stdout: error.stdout ?? '',
    }));
    for (const line of stdout.split('\n').slice(1)) {
      const comma = line.indexOf(',"');
      if (comma < 0 || !line.endsWith('"')) continue;
      const path = line.slice(comma + 2, -1);
      if (digests.has(path)) digests.set(path, line.slice(0, comma));
    }
  }
  return digests;
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

/** FileInfo of many files, with one ssdeep run and one YARA run for all of them. */
export async function describeFiles(
  files: ReadonlyArray<{ path: string } & DescribeOptions>,
  tools: ProcessingTools,
): Promise<FileInfo[]> {
  const digests: FileDigests[] = [];
  for (const file of files) digests.push(await digestFile(file.path));
  const paths = files.map((file) => file.path);
  const fuzzy = await ssdeepMany(paths);
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
      ssdeep: fuzzy.get(file.path) ?? null,
      type: await tools.fileType.detect(file.path),
      yara: yara.get(file.path) ?? [],
      urls: digest.urls,
    });
  }
  return described;
}
