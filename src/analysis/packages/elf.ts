import { definePackage } from './define.js';

/** ELF executables (and anything else the kernel can start itself): run directly. */
export const elfPackage = definePackage({
  name: 'elf',
  aliases: ['generic', 'bin'],
  description: 'runs an ELF executable directly (32- and 64-bit x86, static or dynamic)',
  fileTypes: '^ELF ',
  command: ['{path}', '{arguments}'],
});
