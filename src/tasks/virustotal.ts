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
    const url = `${settings.url.replace(/\/+$/, '')}/files/${encodeURIComponent(hash)}/download`;
    const signal = AbortSignal.timeout(settings.timeout_ms);
    let response = await fetch(url, { headers: { 'x-apikey': settings.key }, redirect: 'manual', signal });
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      // The file itself may be served from elsewhere (a signed storage URL): the key is not sent there.
      await response.body?.cancel();
      response = await fetch(new URL(location, url), { signal });
    }
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
