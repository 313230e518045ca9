import { interpreterPackage } from './interpreter.js';

export const perlPackage = interpreterPackage({
  name: 'perl',
  aliases: ['pl'],
  description: 'runs a Perl script',
  interpreter: ['/usr/bin/perl'],
  typeWords: /perl script/i,
  extensions: ['.pl', '.pm'],
});
