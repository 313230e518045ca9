import { headOf } from '../helpers/file-search.js';
import { Signature, type SignatureContext, type SignatureInfo } from '../signature.js';

/** Packer names as static analysis or PEiD report them. */
const PACKER = /\b(upx|aspack|mpress|petite|themida|vmprotect|ezuri|kiteshield|burneye|shiva|elf-?crypt|midgetpack|enigma)\b/i;
/** Compressed or encrypted code has close to 8 bits of entropy per byte; compiled code sits near 6. */
const PACKED_ENTROPY = 7.2;
const UPX_MAGIC = Buffer.from('UPX!');

/**
 * The sample's code is packed: a known packer's marks (UPX's "UPX!" header and banner), a packer named by
 * static analysis, or code sections whose entropy only compression or encryption gives.
 */
export class PackedBinary extends Signature<never> {
  readonly info: SignatureInfo = {
    name: 'packed_binary',
    description: 'The sample is packed or encrypted to hide its code from static analysis',
    severity: 2,
    categories: ['packer'],
    ttp: ['T1027.002'],
  };

  override async onComplete(ctx: SignatureContext): Promise<void> {
    const { report } = ctx;
    for (const name of packerNames(report.static)) this.markIoc('packer', name, 'packer named by static analysis');
    for (const section of highEntropySections(report.static)) {
      this.markIoc('section', section.name, `entropy ${section.entropy.toFixed(2)}`);
    }
    for (const text of report.strings ?? []) {
      if (/packed with the UPX|\$Id: UPX/.test(text)) this.markIoc('string', text.slice(0, 200), 'UPX banner');
    }
    const head = report.target.category === 'file' ? await headOf(report.target.file?.path ?? ctx.paths.binary, 4096) : null;
    if (head?.includes(UPX_MAGIC)) this.markIoc('header', 'UPX!', 'UPX header in the first 4 KiB');
  }
}

/**
 * Static results differ by file type and are not typed in detail (report-types leaves `static` open), so
 * this reads them defensively: `peid_signatures`, any `packer`/`packers` field, at the top or one level down.
 */
function packerNames(section: Record<string, unknown> | undefined): string[] {
  const names: string[] = [];
  for (const scope of scopesOf(section)) {
    for (const key of ['peid_signatures', 'packer', 'packers']) {
      const value = scope[key];
      const values = Array.isArray(value) ? value : [value];
      for (const item of values) if (typeof item === 'string' && PACKER.test(item)) names.push(item);
    }
  }
  return names;
}

/** Sections (PE `pe_sections`, ELF `sections`/`segments`) with an `entropy` above the packed threshold. */
function highEntropySections(section: Record<string, unknown> | undefined): Array<{ name: string; entropy: number }> {
  const found: Array<{ name: string; entropy: number }> = [];
  for (const scope of scopesOf(section)) {
    for (const key of ['pe_sections', 'sections', 'segments']) {
      const list = scope[key];
      if (!Array.isArray(list)) continue;
      for (const item of list) {
        if (item === null || typeof item !== 'object') continue;
        const { name, entropy, size, size_of_data } = item as Record<string, unknown>;
        const bytes = typeof size === 'number' ? size : typeof size_of_data === 'number' ? size_of_data : Number.POSITIVE_INFINITY;
        if (typeof entropy === 'number' && entropy >= PACKED_ENTROPY && bytes >= 1024) found.push({ name: String(name ?? '?'), entropy });
      }
    }
  }
  return found;
}

function scopesOf(section: Record<string, unknown> | undefined): Array<Record<string, unknown>> {
  if (!section) return [];
  const nested = Object.values(section).filter((value): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value));
  return [section, ...nested];
}
