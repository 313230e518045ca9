import { interpreterPackage } from './interpreter.js';

export const shellPackage = interpreterPackage({
  name: 'bash',
  aliases: ['sh', 'shell'],
  description: 'runs a shell script with bash',
  interpreter: ['/bin/bash'],
  typeWords: /shell script|Bourne-Again/i,
  extensions: ['.sh', '.bash'],
});
