import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Issue 14's Windows samples (test/fixtures/windows/*.c), built 32- and 64-bit with mingw-w64 by
 * scripts/build-windows-samples.sh (the setup step runs it with --test), and the other files there.
 */
export type WindowsSampleName = 'dropper' | 'persistence' | 'inject' | 'mutex' | 'ransom' | 'payload-dll' | 'evade-wine' | 'gui' | 'shell-execute';
export type WindowsBits = 32 | 64;

/** The built sample's path: `<name>.exe`, or `<name>.dll` for the DLL. Throws when it was not built. */
export function windowsSample(name: WindowsSampleName, bits: WindowsBits): string {
  const file = `${name}.${name.endsWith('-dll') ? 'dll' : 'exe'}`;
  const path = windowsFixture(join('build', String(bits), file), false);
  if (!path) throw new Error(`Windows sample ${bits}/${file} is not built: run scripts/build-windows-samples.sh`);
  return path;
}

/** A file under test/fixtures/windows, found from the compiled test (dist/test/helpers) or the source alike. */
export function windowsFixture(relative: string): string;
export function windowsFixture(relative: string, required: false): string | undefined;
export function windowsFixture(relative: string, required = true): string | undefined {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, '..', 'fixtures'), join(here, '..', '..', '..', 'test', 'fixtures')].map((fixtures) => join(fixtures, 'windows', relative));
  const found = candidates.find((path) => existsSync(path));
  if (!found && required) throw new Error(`test/fixtures/windows/${relative} not found near ${here}`);
  return found;
}
