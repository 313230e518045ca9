import { interpreterPackage } from './interpreter.js';

export const shellPackage = interpreterPackage({
  name: 'bash',
  aliases: ['sh', 'shell'],
  description: 'runs a shell script with bash',
  interpreter: ['/bin/bash'],
  fileTypes: 'shell script|Bourne-Again',
  extensions: ['.sh', '.bash'],
});
