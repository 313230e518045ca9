import { readdir, readFile } from 'node:fs/promises';
import yazl from 'yazl';
import { guestFile } from './guest-files.js';

/**
 * The analyzer as the zip the agent's /extract takes, made once per process from guest/analyzer/. It is
 * uploaded for every task, as Cuckoo does, so changing it needs no new image.
 */
let zip: Promise<Buffer> | undefined;

export function analyzerZip(): Promise<Buffer> {
  zip ??= buildZip().catch((error: unknown) => {
    zip = undefined;
    throw error;
  });
  return zip;
}

async function buildZip(): Promise<Buffer> {
  const archive = new yazl.ZipFile();
  const dir = guestFile('analyzer');
  for (const name of (await readdir(dir)).filter((file) => file.endsWith('.py')).sort()) {
    archive.addBuffer(await readFile(`${dir}/${name}`), name, { mode: 0o100644 });
  }
  archive.end();
  const chunks: Buffer[] = [];
  for await (const chunk of archive.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
