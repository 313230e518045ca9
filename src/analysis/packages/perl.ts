import { interpreterPackage } from './interpreter.js';

export const perlPackage = interpreterPackage({
  name: 'perl',
  aliases: ['pl'],
  description: 'runs a Perl script',
  interpreter: ['/usr/bin/perl'],
  fileTypes: 'perl script',
  extensions: ['.pl', '.pm'],
});
