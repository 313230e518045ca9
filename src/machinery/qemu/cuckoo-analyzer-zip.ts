import { existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';
import yazl from 'yazl';
import { NestboxError } from '../../errors.js';

/**
 * nestbox ships no Windows analyzer: a Windows guest runs Cuckoo 2.0.7's analyzer and monitor, taken from
 * the operator's Cuckoo working directory (the machine's `cuckoo_cwd`). They are packed the way Cuckoo's
 * host packs them for its agent's /extract, so that the analyzer finds its parts where it looks:
 *   analyzer/windows/**            at the root of the zip (analyzer.py, lib/, modules/...)
 *   monitor/<monitor>/*            under bin/ (`latest` is a file naming the current monitor's folder)
 *   stuff/dumpmem.yarac            as bin/rules.yarac, when present
 * Made once per working directory and monitor, and uploaded for every task as Cuckoo does.
 */
const zips = new Map<string, Promise<Buffer>>();

export function cuckooAnalyzerZip(cuckooCwd: string, monitor: string): Promise<Buffer> {
  const key = `${cuckooCwd}\0${monitor}`;
  let zip = zips.get(key);
  if (!zip) {
    zip = buildZip(cuckooCwd, monitor);
    zip.catch(() => zips.delete(key));
    zips.set(key, zip);
  }
  return zip;
}

/** Refuses, as a configuration error, a working directory without Cuckoo's Windows analyzer. */
export function checkCuckooCwd(cuckooCwd: string, machine: string): void {
  if (!cuckooCwd) throw invalidConfig(`machine ${machine}: a Windows guest needs "cuckoo_cwd", the Cuckoo working directory with Cuckoo 2.0.7's Windows analyzer and monitor`);
  if (!existsSync(join(cuckooCwd, 'analyzer', 'windows', 'analyzer.py'))) {
    throw invalidConfig(`machine ${machine}: ${cuckooCwd} holds no analyzer/windows/analyzer.py: "cuckoo_cwd" must be a Cuckoo 2.0.7 working directory`);
  }
}

async function buildZip(cuckooCwd: string, monitor: string): Promise<Buffer> {
  checkCuckooCwd(cuckooCwd, '(any)');
  const archive = new yazl.ZipFile();
  const analyzerDir = join(cuckooCwd, 'analyzer', 'windows');
  for (const file of await filesUnder(analyzerDir)) archive.addBuffer(await readFile(file), zipName(relative(analyzerDir, file)));
  const monitorDir = await monitorFolder(cuckooCwd, monitor);
  for (const file of await filesUnder(monitorDir)) archive.addBuffer(await readFile(file), `bin/${zipName(relative(monitorDir, file))}`);
  const rules = join(cuckooCwd, 'stuff', 'dumpmem.yarac');
  if (existsSync(rules)) archive.addBuffer(await readFile(rules), 'bin/rules.yarac');
  archive.end();
  const chunks: Buffer[] = [];
  for await (const chunk of archive.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** `monitor/latest` is a file holding the current monitor's name (older installs: a link to its folder). */
async function monitorFolder(cuckooCwd: string, monitor: string): Promise<string> {
  let dir = join(cuckooCwd, 'monitor', monitor);
  if (!existsSync(dir)) throw invalidConfig(`the Cuckoo working directory ${cuckooCwd} has no monitor/${monitor}`);
  if ((await stat(dir)).isFile()) dir = join(cuckooCwd, 'monitor', basename((await readFile(dir, 'utf8')).trim()));
  if (!existsSync(dir)) throw invalidConfig(`monitor/${monitor} in ${cuckooCwd} names a monitor folder that does not exist: ${dir}`);
  return dir;
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name)).sort();
}

function zipName(path: string): string {
  return path.split(sep).join('/');
}

function invalidConfig(message: string): NestboxError {
  return new NestboxError('invalid_config', message);
}
