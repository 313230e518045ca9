// Benign control: a Node.js program fetching a status document over HTTP and saving it.
'use strict';
const http = require('node:http');
const fs = require('node:fs');

http.get('http://api.status-page.test/v1/status.json', (response) => {
  let body = '';
  response.setEncoding('utf8');
  response.on('data', (chunk) => (body += chunk));
  response.on('end', () => {
    fs.writeFileSync('/tmp/status.json', body);
    console.log(`status ${response.statusCode}, ${body.length} bytes`);
  });
}).on('error', (error) => {
  console.error(error.message);
  process.exitCode = 1;
});
