// Builds the web interface (web/) into dist/web/: type-checks it, then bundles it with esbuild.
// Everything it serves is in that folder: no CDN, no remote fonts, nothing fetched at run time.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'web');

execFileSync(join(root, 'node_modules', '.bin', 'tsc'), ['-p', join(root, 'web', 'tsconfig.json')], { stdio: 'inherit' });
// Only what this script writes: tsc compiles web code shared with Node tests (web/src/compare/) into dist/web/src.
rmSync(join(out, 'assets'), { recursive: true, force: true });
mkdirSync(join(out, 'assets'), { recursive: true });
await build({
  entryPoints: { app: join(root, 'web', 'src', 'main.tsx') },
  outdir: join(out, 'assets'),
  bundle: true,
  format: 'esm',
  target: 'es2022',
  minify: true,
  sourcemap: true,
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'linked',
  logLevel: 'warning',
});
copyFileSync(join(root, 'web', 'index.html'), join(out, 'index.html'));
