// Benign control: a front-end build step. Writes a few modules, "bundles" them into one file with a
// banner and a source list, and checks the bundle loads.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const src = '/tmp/webapp/src';
const dist = '/tmp/webapp/dist';
fs.mkdirSync(src, { recursive: true });
fs.mkdirSync(dist, { recursive: true });
for (const name of ['util', 'view', 'model', 'main']) {
  fs.writeFileSync(path.join(src, `${name}.js`), `exports.${name} = () => '${name}';\n`);
}
const parts = fs.readdirSync(src).sort().map((file) => `// ${file}\n(function(exports){${fs.readFileSync(path.join(src, file), 'utf8')}})(module.exports);`);
fs.writeFileSync(path.join(dist, 'bundle.js'), `/* webapp bundle */\n${parts.join('\n')}\n`);
const bundle = require(path.join(dist, 'bundle.js'));
console.log(Object.keys(bundle).join(','));
