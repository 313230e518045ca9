import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { internal } from '../../errors.js';
import { mustRun } from '../host/command.js';

/**
 * Debian packages fetched without installing them on the host: `apt-get download` into a folder, then
 * `dpkg-deb` to read or unpack them. Uses the host's apt sources, so it works wherever apt does.
 */
export async function downloadPackage(name: string, dir: string, { reuse = false } = {}): Promise<string> {
  const before = new Set(await debsIn(dir));
  // Versioned package names (linux-image-6.1.0-56-amd64) always hold the same files: a copy can be reused.
  const cached = reuse ? [...before].find((file) => file.startsWith(`${name}_`)) : undefined;
  if (cached) return join(dir, cached);
  await mustRun(['apt-get', 'download', '-q', name], `downloading the Debian package ${name}`, { cwd: dir });
  const fresh = (await debsIn(dir)).filter((file) => !before.has(file));
  const deb = fresh.find((file) => file.startsWith(`${name}_`)) ?? fresh[0];
  if (!deb) throw internal(`apt-get download ${name} produced no package file`, { context: { name, dir } });
  return join(dir, deb);
}

/** The first package a .deb depends on, without its version constraint (for meta-packages). */
export async function firstDependency(deb: string): Promise<string> {
  const depends = await mustRun(['dpkg-deb', '--field', deb, 'Depends'], `reading the dependencies of ${deb}`);
  const first = depends.split(',')[0]?.trim().split(/\s/)[0];
  if (!first) throw internal(`the Debian package ${deb} depends on nothing`, { context: { deb } });
  return first;
}

export async function unpackPackage(deb: string, dir: string): Promise<void> {
  await mustRun(['dpkg-deb', '--extract', deb, dir], `unpacking ${deb}`);
}

async function debsIn(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((file) => file.endsWith('.deb'));
}
