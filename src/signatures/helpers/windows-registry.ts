import { baseApi, handleArg, stringArg, type WinCall } from './windows-calls.js';

/**
 * Registry paths of Windows calls, spelled one way so that signatures can match them: the root as
 * `HKEY_CURRENT_USER` / `HKEY_LOCAL_MACHINE`..., single backslashes, no trailing one.
 */

const ROOT_ALIASES: ReadonlyArray<[RegExp, string]> = [
  [/^(HKEY_CURRENT_USER|HKCU)(\\|$)/i, 'HKEY_CURRENT_USER$2'],
  [/^(HKEY_LOCAL_MACHINE|HKLM)(\\|$)/i, 'HKEY_LOCAL_MACHINE$2'],
  [/^(HKEY_CLASSES_ROOT|HKCR)(\\|$)/i, 'HKEY_CLASSES_ROOT$2'],
  [/^(HKEY_USERS|HKU)(\\|$)/i, 'HKEY_USERS$2'],
  [/^(HKEY_CURRENT_CONFIG|HKCC)(\\|$)/i, 'HKEY_CURRENT_CONFIG$2'],
  // The native names Nt* calls and Wine's +reg channel use.
  [/^\\REGISTRY\\USER\\S-1-5-[0-9-]+(\\|$)/i, 'HKEY_CURRENT_USER$1'],
  [/^\\REGISTRY\\MACHINE(\\|$)/i, 'HKEY_LOCAL_MACHINE$1'],
  [/^\\REGISTRY\\USER(\\|$)/i, 'HKEY_USERS$1'],
];

/** A registry path with its root spelled out and separators tidied. */
export function canonicalRegistryPath(path: string): string {
  let tidy = path.replace(/\\{2,}/g, '\\').replace(/\\$/, '');
  for (const [alias, root] of ROOT_ALIASES) {
    if (alias.test(tidy)) {
      tidy = tidy.replace(alias, root);
      break;
    }
  }
  return tidy;
}

/** The predefined keys (winreg.h), which a program passes as hKey without opening them. */
const PREDEFINED_KEYS: Record<string, string> = {
  '0x80000000': 'HKEY_CLASSES_ROOT',
  '0x80000001': 'HKEY_CURRENT_USER',
  '0x80000002': 'HKEY_LOCAL_MACHINE',
  '0x80000003': 'HKEY_USERS',
  '0x80000005': 'HKEY_CURRENT_CONFIG',
  // The same, sign-extended by a 64-bit program.
  '0xffffffff80000000': 'HKEY_CLASSES_ROOT',
  '0xffffffff80000001': 'HKEY_CURRENT_USER',
  '0xffffffff80000002': 'HKEY_LOCAL_MACHINE',
  '0xffffffff80000003': 'HKEY_USERS',
  '0xffffffff80000005': 'HKEY_CURRENT_CONFIG',
};

/** Calls that name a value under their key (the value name ends the path). */
const VALUE_CALLS = new Set(['RegSetValueEx', 'RegSetValue', 'RegSetKeyValue', 'RegQueryValueEx', 'RegQueryValue', 'RegGetValue', 'RegDeleteValue', 'RegDeleteKeyValue', 'NtSetValueKey', 'NtQueryValueKey', 'NtDeleteValueKey', 'ZwSetValueKey', 'ZwQueryValueKey']);

/**
 * The full registry path a call works on: processing's `regkey` when it resolved one, else a predefined
 * root in hKey joined with lpSubKey (and, for value calls, the value name). Undefined when neither tells.
 */
export function registryPathOf(event: WinCall): string | undefined {
  const resolved = stringArg(event, 'regkey');
  if (resolved) return canonicalRegistryPath(resolved);
  const root = PREDEFINED_KEYS[handleArg(event, 'hKey', 'hkey') ?? ''];
  if (!root) return undefined;
  const subKey = stringArg(event, 'lpSubKey', 'lpszSubKey');
  const value = VALUE_CALLS.has(baseApi(event)) ? stringArg(event, 'lpValueName', 'lpValue', 'ValueName') ?? '' : undefined;
  return canonicalRegistryPath([root, subKey, value].filter((part) => part !== undefined && part !== '').join('\\'));
}

/** Calls that write to the registry: values set, keys created. */
const WRITE_CALLS = new Set(['RegSetValueEx', 'RegSetValue', 'RegSetKeyValue', 'NtSetValueKey', 'ZwSetValueKey']);

export function isRegistryValueWrite(event: WinCall): boolean {
  return WRITE_CALLS.has(baseApi(event));
}

/** Calls that open, create or read a key or value (looking at what is there). */
const LOOK_CALLS = new Set([
  'RegOpenKey', 'RegOpenKeyEx', 'RegCreateKey', 'RegCreateKeyEx', 'RegQueryValue', 'RegQueryValueEx', 'RegGetValue', 'RegEnumKeyEx', 'RegEnumValue',
  'NtOpenKey', 'NtOpenKeyEx', 'NtCreateKey', 'NtQueryValueKey', 'NtQueryKey', 'ZwOpenKey', 'ZwOpenKeyEx', 'ZwQueryValueKey',
]);

export function isRegistryLook(event: WinCall): boolean {
  return LOOK_CALLS.has(baseApi(event));
}
