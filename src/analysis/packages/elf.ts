import { splitArguments } from './arguments.js';
import type { AnalysisPackage } from './types.js';

/** ELF executables (and anything else the kernel can start itself): run directly. */
export const elfPackage: AnalysisPackage = {
  name: 'elf',
  aliases: ['generic', 'bin'],
  description: 'runs an ELF executable directly (32- and 64-bit x86, static or dynamic)',
  matches: ({ fileType }) => /^ELF /.test(fileType),
  command: ({ path, options }) => [path, ...splitArguments(options.arguments)],
};
