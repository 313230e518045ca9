import { interpreterPackage } from './interpreter.js';

export const nodePackage = interpreterPackage({
  name: 'nodejs',
  aliases: ['node', 'js'],
  description: 'runs a JavaScript file with Node.js',
  interpreter: ['/usr/bin/node'],
  fileTypes: 'node(\\.js)? script',
  extensions: ['.js', '.mjs', '.cjs'],
});
