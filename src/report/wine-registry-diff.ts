import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Registry changes of a Wine task, from the prefix's registry files: those wineserver saved at the end
 * (`logs/wine/registry/`) against the prepared prefix's (`logs/wine/registry-before/`). They hold every
 * write, including those of calls relay did not trace (the registry API of a DLL excluded from relay,
 * a native call, another process). Paths as Windows names them: `HKEY_CURRENT_USER\Software\...\Run\name`.
 */

export interface RegistryChanges {
  /** Values added or changed (`key\value`, the default value as the key), and keys added with no value. */
  written: string[];
  /** Values and keys removed. */
  deleted: string[];
}

export const WINE_REGISTRY_AFTER = 'logs/wine/registry';
export const WINE_REGISTRY_BEFORE = 'logs/wine/registry-before';

/** The files wineserver saves, and the key each holds. */
const HIVES: ReadonlyArray<[file: string, root: string]> = [
  ['system.reg', 'HKEY_LOCAL_MACHINE'],
  ['user.reg', 'HKEY_CURRENT_USER'],
  ['userdef.reg', 'HKEY_USERS\\.Default'],
];

/** Keys -> value name -> the value as the file writes it ('' for the default value). */
type Hive = Map<string, Map<string, string>>;

/** The changes of a task folder; undefined when it has no saved registry. */
export async function registryChanges(dir: string, limit = 10000): Promise<RegistryChanges | undefined> {
  const changes: RegistryChanges = { written: [], deleted: [] };
  let found = false;
  for (const [file, root] of HIVES) {
    const after = await readFile(join(dir, WINE_REGISTRY_AFTER, file), 'utf8').catch(() => undefined);
    if (after === undefined) continue;
    found = true;
    const before = await readFile(join(dir, WINE_REGISTRY_BEFORE, file), 'utf8').catch(() => '');
    diffHives(parseRegistryFile(before), parseRegistryFile(after), root, changes, limit);
  }
  return found ? changes : undefined;
}

export function diffHives(before: Hive, after: Hive, root: string, changes: RegistryChanges, limit = Infinity): void {
  const add = (list: string[], path: string) => {
    if (list.length < limit) list.push(path);
  };
  for (const [key, values] of after) {
    const path = `${root}\\${key}`;
    const old = before.get(key);
    if (!old && values.size === 0) add(changes.written, path);
    for (const [name, value] of values) if (old?.get(name) !== value) add(changes.written, valuePath(path, name));
    for (const name of old?.keys() ?? []) if (!values.has(name)) add(changes.deleted, valuePath(path, name));
  }
  for (const key of before.keys()) if (!after.has(key)) add(changes.deleted, `${root}\\${key}`);
}

function valuePath(key: string, name: string): string {
  return name === '' ? key : `${key}\\${name}`;
}

/**
 * Wine's registry file format: `[Software\\Key] 1700000000` opens a key (names escaped as in C), then
 * `"name"=value` or `@=value` lines, a value continued on the next line after a trailing `\`; `#` lines
 * are Wine's notes (a key's time, its class), `;;` comments.
 */
export function parseRegistryFile(text: string): Hive {
  const hive: Hive = new Map();
  let values: Map<string, string> | undefined;
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = pending + raw.replace(/\r$/, '');
    if (line.endsWith('\\') && values && !line.startsWith('[')) {
      pending = line.slice(0, -1).trimEnd();
      continue;
    }
    pending = '';
    if (line.startsWith('[')) {
      const end = line.lastIndexOf(']');
      values = new Map();
      hive.set(unescape(line.slice(1, end)), values);
    } else if (values && (line.startsWith('"') || line.startsWith('@='))) {
      const [name, rest] = line.startsWith('@=') ? ['', line.slice(2)] : splitName(line);
      values.set(name, rest.replace(/\s+/g, ''));
    }
  }
  return hive;
}

/** `"na\"me"=value` -> [na"me, value]. */
function splitName(line: string): [string, string] {
  let i = 1;
  while (i < line.length && line[i] !== '"') i += line[i] === '\\' ? 2 : 1;
  return [unescape(line.slice(1, i)), line.slice(i + 2)];
}

function unescape(text: string): string {
  return text.replace(/\\(x[0-9a-fA-F]{1,4}|.)/g, (_all, escaped: string) =>
    escaped.length > 1 ? String.fromCharCode(parseInt(escaped.slice(1), 16)) : escaped === 'n' ? '\n' : escaped === 't' ? '\t' : escaped,
  );
}
