import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import { isElf, parseElfFile } from '../elf.js';
import { magicOfBuffer } from '../magic.js';
import { detectPackers } from '../packer.js';
import { isPe, type PeInfo, parsePeFile } from '../../formats/pe.js';
import { openRegularFile } from '../../util/safe-open.js';
import { detectScript } from '../script.js';
import { findUrls } from '../strings.js';
import type { ProcessingModule } from '../types.js';

/** Bytes of the sample looked at for markers, entropy and URLs. */
const MAX_READ = 32 << 20;
/** Resources typed with libmagic; each costs a process. */
const MAX_TYPED_RESOURCES = 50;

/**
 * Static facts of a file sample: `elf` for ELF files; Cuckoo's pe_* keys for PE files; `script` for
 * scripts; `packer` (markers and entropy) and `urls` for every file.
 */
export const staticModule: ProcessingModule<'static'> = {
  key: 'static',
  async run(input) {
    if (input.binaryPath === undefined || !existsSync(input.binaryPath)) return undefined;
    const path = input.binaryPath;
    const data = await readStart(path, MAX_READ);
    const result: Record<string, unknown> = {};
    const elf = isElf(data) ? await parseElfFile(path) : undefined;
    if (elf) result.elf = elf;
    const pe = isPe(data) ? await parsePeFile(path) : undefined;
    if (pe) Object.assign(result, await withResourceTypes(pe));
    const script = detectScript(basename(input.task.target), data);
    if (script) result.script = script;
    const packer = detectPackers(data, pe, elf);
    result.packer = packer;
    if (pe) result.peid_signatures = packer.names.length > 0 ? packer.names : null;
    result.urls = [...new Set(findUrls(data.toString('latin1')))];
    return result;
  },
};

async function readStart(path: string, limit: number): Promise<Buffer> {
  const handle = await openRegularFile(path);
  try {
    const { size } = await handle.stat();
    const buffer = Buffer.alloc(Math.min(size, limit));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** PE facts for the report: each resource typed by libmagic, its raw bytes dropped. */
async function withResourceTypes(pe: PeInfo): Promise<PeInfo> {
  const resources = [];
  for (const [index, resource] of pe.pe_resources.entries()) {
    const { data, ...shown } = resource;
    const filetype = data && data.length > 0 && index < MAX_TYPED_RESOURCES ? await magicOfBuffer(data) : null;
    resources.push({ ...shown, filetype });
  }
  return { ...pe, pe_resources: resources };
}
