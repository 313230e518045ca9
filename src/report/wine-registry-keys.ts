import { normalHandle } from './wine-relay-line.js';

/**
 * Registry key handles of one Wine process, to full key paths (`HKEY_CURRENT_USER\Software\...`). Relay output
 * shows a call's key handle but not the handle an open or create call gave back; Wine's `+reg` channel
 * shows both the key asked for (`NtCreateKey (0x28,L"Software\\x",...)`) and the handle given
 * (`NtCreateKey <- 0x3c`), and the root keys Wine opens for the predefined ones.
 */

/** The predefined keys by the low 32 bits of their handle value (64-bit relay prints them sign-extended). */
const PREDEFINED: Record<string, string> = {
  '80000000': 'HKEY_CLASSES_ROOT',
  '80000001': 'HKEY_CURRENT_USER',
  '80000002': 'HKEY_LOCAL_MACHINE',
  '80000003': 'HKEY_USERS',
  '80000004': 'HKEY_PERFORMANCE_DATA',
  '80000005': 'HKEY_CURRENT_CONFIG',
  '80000006': 'HKEY_DYN_DATA',
};

/** A key's NT name (`\Registry\Machine\Software`) as Windows programs name it (`HKEY_LOCAL_MACHINE\Software`). */
export function win32KeyPath(ntPath: string): string {
  const parts = ntPath.split('\\').filter((part) => part !== '');
  if (parts[0]?.toLowerCase() !== 'registry') return ntPath;
  const hive = parts[1]?.toLowerCase();
  if (hive === 'machine') return ['HKEY_LOCAL_MACHINE', ...parts.slice(2)].join('\\');
  if (hive !== 'user') return ntPath;
  // The user's own hive is the account's SID; .Default and other SIDs are seen through HKEY_USERS.
  const sid = parts[2];
  if (sid !== undefined && /^S-1-5-21-/i.test(sid) && !/_Classes$/i.test(sid)) return ['HKEY_CURRENT_USER', ...parts.slice(3)].join('\\');
  return ['HKEY_USERS', ...parts.slice(2)].join('\\');
}

export function predefinedKey(handle: string): string | undefined {
  const hex = normalHandle(handle);
  return PREDEFINED[hex.length === 16 && hex.startsWith('ffffffff') ? hex.slice(8) : hex];
}

export function joinKey(key: string, sub: string | undefined): string {
  const rest = (sub ?? '').replace(/^\\+|\\+$/g, '');
  return rest === '' ? key : `${key}\\${rest}`;
}

/** The key handles of one process, and the key request each thread has in flight. */
export class RegistryKeys {
  readonly #paths = new Map<string, string>();
  readonly #requests = new Map<number, string | undefined>();

  /** The full path of a key handle; undefined for a handle never seen opened. */
  pathOf(handle: string): string | undefined {
    return predefinedKey(handle) ?? this.#paths.get(normalHandle(handle));
  }

  /** `+reg`: a thread asks for a key (root handle `0` when the name is a full NT name). */
  request(wintid: number, root: string, name: string): void {
    const base = root === '0' ? undefined : this.pathOf(root);
    const path = root === '0' ? win32KeyPath(name) : base === undefined ? undefined : joinKey(base, name);
    this.#requests.set(wintid, path);
  }

  /** `+reg`: the handle the thread's last request got; returns the key's path when known. */
  given(wintid: number, handle: string | undefined): string | undefined {
    const path = this.#requests.get(wintid);
    this.#requests.delete(wintid);
    if (handle !== undefined && path !== undefined) this.#paths.set(handle, path);
    return handle === undefined ? undefined : path;
  }

  /** A handle known from elsewhere (an open call's own arguments). */
  remember(handle: string, path: string): void {
    this.#paths.set(normalHandle(handle), path);
  }
}
