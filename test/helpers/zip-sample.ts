import yazl from 'yazl';

/** One file of a zip sample: its name in the archive, its bytes, its mode (executable by default). */
export type ZipEntry = [name: string, content: string | Uint8Array, mode?: number];

/** A zip of the given files, as a sample submitted with package=zip. */
export async function zipSample(entries: ZipEntry[]): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, content, mode = 0o100755] of entries) zip.addBuffer(Buffer.from(content), name, { mode });
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
