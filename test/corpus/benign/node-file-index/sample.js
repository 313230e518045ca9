// Benign control: indexes a folder of notes it writes itself: word counts per file, saved as JSON.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const dir = '/tmp/notes';
fs.mkdirSync(dir, { recursive: true });
for (let n = 0; n < 6; n++) fs.writeFileSync(path.join(dir, `note-${n}.md`), `# Note ${n}\n${'lorem ipsum '.repeat(n + 1)}\n`);
const index = {};
for (const file of fs.readdirSync(dir)) index[file] = fs.readFileSync(path.join(dir, file), 'utf8').split(/\s+/).filter(Boolean).length;
fs.writeFileSync('/tmp/notes-index.json', JSON.stringify(index, null, 2));
console.log(index);
