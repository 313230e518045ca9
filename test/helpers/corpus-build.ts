import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The labelled corpus's sources (test/corpus/<malicious|benign>/<id>/). */
export const CORPUS_DIR = fileURLToPath(new URL('../../../test/corpus/', import.meta.url));

/**
 * Compiles one corpus sample into `outDir` as scripts/build-corpus.sh does (same compilers and code flags):
 * sample.win.c with mingw-w64 into a PE32+, sample.c with gcc into a static ELF. `id` is e.g.
 * 'malicious/pe-injector'; returns the built file's path. Tests build into their own temporary folder so
 * that they never depend on, or change, the corpus's own builds.
 */
export function buildCorpusSample(id: string, outDir: string, kind: 'pe' | 'elf' = id.includes('/pe-') ? 'pe' : 'elf'): string {
  const name = id.replaceAll('/', '-');
  const flags = ['-O1', '-w', '-fno-ident'];
  if (kind === 'pe') {
    const output = join(outDir, `${name}.exe`);
    execFileSync('x86_64-w64-mingw32-gcc', [...flags, '-o', output, join(CORPUS_DIR, id, 'sample.win.c')]);
    return output;
  }
  const source = join(CORPUS_DIR, id, id.includes('/pe-') ? 'sample.win.c' : 'sample.c');
  const output = join(outDir, name);
  execFileSync('gcc', [...flags, '-static', '-o', output, '-x', 'c', source]);
  return output;
}
