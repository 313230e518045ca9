import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Issue 14's Windows samples (test/fixtures/windows/*.c), built 32- and 64-bit with mingw-w64 by
 * scripts/build-windows-samples.sh (the setup step runs it with --test).
 */
export type WindowsSampleName = 'dropper' | 'persistence' | 'inject' | 'mutex' | 'ransom' | 'payload-dll' | 'evade-wine' | 'gui';
export type WindowsBits = 32 | 64;

/** The built sample's path: `<name>.exe`, or `<name>.dll` for the DLL. Throws when it was not built. */
export function windowsSample(name: WindowsSampleName, bits: WindowsBits): string {
  const file = `${name}.${name.endsWith('-dll') ? 'dll' : 'exe'}`;
  const here = dirname(fileURLToPath(import.meta.url));
  // From the compiled test (dist/test/helpers) or from the source alike.
  const candidates = [join(here, '..', 'fixtures'), join(here, '..', '..', '..', 'test', 'fixtures')].map((fixtures) =>
    join(fixtures, 'windows', 'build', String(bits), file),
  );
  const found = candidates.find((path) => existsSync(path));
  if (!found) throw new Error(`Windows sample ${bits}/${file} is not built: run scripts/build-windows-samples.sh`);
  return found;
}
