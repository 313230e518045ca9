import type { Config } from '../config/schema.js';
import { isNestboxError, unavailable } from '../errors.js';
import { type FileHashes, hashOfLength } from '../storage/hashing.js';
import { writeHashedFile } from '../storage/upload.js';

/**
 * Downloads a sample by hash from a VirusTotal-v3-compatible API (`GET <url>/files/<hash>/download`,
 * key in `x-apikey`), for hash lines of `/tasks/create/submit`. The body is streamed to disk and hashed
 * on the way; it must hash to what was asked for.
 */
export async function downloadByHash(
  hash: string,
  path: string,
  settings: Config['virustotal'],
  sizeLimit: number,
): Promise<FileHashes> {
  if (settings.key === '') throw unavailable(`no VirusTotal key is configured for "${hash}"`);
  const failure = (reason: string, cause?: unknown) =>
    unavailable(`Could not fetch hash "${hash}" from VirusTotal (${reason})`, { cause, context: { hash, url: settings.url } });

  let hashes: FileHashes;
  try {
    const response = await fetch(`${settings.url.replace(/\/+$/, '')}/files/${encodeURIComponent(hash)}/download`, {
      headers: { 'x-apikey': settings.key },
      signal: AbortSignal.timeout(settings.timeout_ms),
    });
    if (!response.ok || response.body === null) {
      await response.body?.cancel();
      throw failure(`HTTP ${response.status}`);
    }
    const length = Number(response.headers.get('content-length') ?? Number.NaN);
    hashes = await writeHashedFile(response.body, path, {
      limit: sizeLimit,
      expectedMax: Number.isSafeInteger(length) ? length : undefined,
      what: 'The downloaded file',
    });
  } catch (error) {
    if (isNestboxError(error, 'unavailable')) throw error;
    if (isNestboxError(error, 'too_large')) throw failure(`larger than api.upload_limit`, error);
    const reason = (error as Error).name === 'TimeoutError' ? `no answer within ${settings.timeout_ms} ms` : (error as Error).message;
    throw failure(reason, error);
  }
  if (hashOfLength(hashes, hash) !== hash) {
    throw unavailable(`the file VirusTotal returned for "${hash}" has a different hash`, { context: { hash, sha256: hashes.sha256 } });
  }
  return hashes;
}
