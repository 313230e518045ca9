import type { FileHandle } from 'node:fs/promises';
import { PassThrough, Readable, Writable } from 'node:stream';
import { ZipWriter } from '@zip.js/zip.js';
import type { FastifyReply } from 'fastify';
import { sendNoBody } from '../api/file-answers.js';

/** The password peers and malware exchanges use, so a browser or antivirus never handles live malware in the clear. */
export const ZIP_PASSWORD = 'infected';

/**
 * Answers with one stored file inside a zip archive encrypted with the password `infected`. ZipCrypto
 * rather than AES: Info-ZIP's unzip, which Debian ships, opens only ZipCrypto (7-Zip opens both). The
 * archive is streamed as it is made, so a large memory dump is never held in memory. `handle` is closed
 * whatever happens.
 */
export function sendZipped(reply: FastifyReply, handle: FileHandle, entryName: string, downloadName: string) {
  reply.type('application/zip').header('content-disposition', `attachment; filename="${downloadName}"`);
  if (reply.request.method === 'HEAD') {
    void handle.close();
    return sendNoBody(reply);
  }
  const body = new PassThrough();
  void writeZip(handle, entryName, body).catch((error: unknown) => {
    reply.log.warn({ err: error, entryName }, 'the zip download failed part-way');
    body.destroy(error as Error);
  });
  return reply.send(body);
}

async function writeZip(handle: FileHandle, entryName: string, into: PassThrough): Promise<void> {
  try {
    const writer = new ZipWriter(Writable.toWeb(into), { password: ZIP_PASSWORD, zipCrypto: true, useWebWorkers: false });
    const content = Readable.toWeb(handle.createReadStream({ start: 0, autoClose: false })) as ReadableStream<Uint8Array>;
    await writer.add(entryName, content);
    await writer.close();
  } finally {
    await handle.close();
  }
}
