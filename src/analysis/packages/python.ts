import { interpreterPackage } from './interpreter.js';

export const pythonPackage = interpreterPackage({
  name: 'python',
  aliases: ['py', 'python3'],
  description: 'runs a Python script with python3',
  interpreter: ['/usr/bin/python3'],
  fileTypes: 'python script',
  extensions: ['.py', '.pyw'],
});
