import { interpreterPackage } from './interpreter.js';

export const nodePackage = interpreterPackage({
  name: 'nodejs',
  aliases: ['node', 'js'],
  description: 'runs a JavaScript file with Node.js',
  interpreter: ['/usr/bin/node'],
  typeWords: /node(\.js)? script/i,
  extensions: ['.js', '.mjs', '.cjs'],
});
