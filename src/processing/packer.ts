import { entropy } from '../formats/binary-reader.js';
import type { ElfInfo } from './elf.js';
import type { PeInfo } from '../formats/pe.js';

/** Signs of packing: packer markers and section names, and entropy near that of random data. */
export interface PackerInfo {
  names: string[];
  /** Bits per byte over the (first part of the) file. */
  entropy: number;
  high_entropy: boolean;
  /** Executable sections or segments whose content looks compressed or encrypted. */
  high_entropy_sections: string[];
}

const HIGH_FILE_ENTROPY = 7.2;
const HIGH_SECTION_ENTROPY = 7.0;

const PE_SECTION_PACKERS: Array<[RegExp, string]> = [
  [/^UPX\d?$/i, 'UPX'],
  [/^\.aspack$|^\.adata$/i, 'ASPack'],
  [/^\.MPRESS\d$/i, 'MPRESS'],
  [/^\.petite$/i, 'Petite'],
  [/^PEC2|^PECompact/i, 'PECompact'],
  [/^\.nsp\d$/i, 'NsPack'],
  [/^\.themida$/i, 'Themida'],
  [/^\.vmp\d$/i, 'VMProtect'],
  [/^kkrunchy$/i, 'kkrunchy'],
  [/^FSG!$/, 'FSG'],
  [/^\.enigma\d$/i, 'Enigma'],
];

export function detectPackers(data: Buffer, pe?: PeInfo, elf?: ElfInfo): PackerInfo {
  const names = new Set<string>();
  if (data.includes('UPX!') || data.includes('This file is packed with the UPX')) names.add('UPX');
  for (const section of pe?.pe_sections ?? []) {
    const packer = PE_SECTION_PACKERS.find(([pattern]) => pattern.test(section.name))?.[1];
    if (packer) names.add(packer);
  }
  const highSections = (pe?.pe_sections ?? [])
    .filter((section) => (Number(section.characteristics) & 0x20000000) !== 0 && section.entropy >= HIGH_SECTION_ENTROPY)
    .map((section) => section.name);
  for (const segment of elf?.program_headers ?? []) {
    if (segment.type !== 'LOAD' || !segment.flags.includes('E') || segment.file_size < 1024) continue;
    const slice = data.subarray(segment.offset, segment.offset + segment.file_size);
    if (slice.length > 0 && entropy(slice) >= HIGH_SECTION_ENTROPY) highSections.push(`LOAD@${segment.virtual_address}`);
  }
  const fileEntropy = entropy(data);
  return {
    names: [...names],
    entropy: fileEntropy,
    high_entropy: fileEntropy >= HIGH_FILE_ENTROPY || highSections.length > 0,
    high_entropy_sections: highSections,
  };
}
