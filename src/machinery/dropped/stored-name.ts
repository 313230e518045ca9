import { posix, win32 } from 'node:path';

/**
 * The name a dropped file is stored under in files/, as Cuckoo's result server names uploads:
 * `<first 16 hex of the stored bytes' sha256>_<its name in the machine>`. The machine chooses nothing
 * on the host: only the base name is used, without the characters that would break the folder or
 * JSON-lines tools. A Windows guest's paths (`C:\...`, `\\server\...`) end at their last backslash.
 */
export function storedName(sha256: string, filepath: string): string {
  const base = WINDOWS_PATH.test(filepath) ? win32.basename(filepath) : posix.basename(filepath);
  const name = base.replace(/[\u0000-\u001f/\\]/g, '_').slice(0, 200) || 'file';
  return `${sha256.slice(0, 16)}_${name}`;
}

const WINDOWS_PATH = /^(?:[A-Za-z]:[\\/]|\\\\)/;
