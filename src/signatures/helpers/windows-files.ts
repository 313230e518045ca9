import { baseApi, dwordArg, stringArg, type WinCall } from './windows-calls.js';

/**
 * Windows file paths of calls: which file a call names, whether it writes or creates it, and the parts of
 * a Windows path.
 */

/** The file a call names: processing's full `filepath`, else the documented argument. */
export function filePathOf(event: WinCall): string | undefined {
  return stringArg(event, 'filepath', 'oldfilepath', 'lpFileName', 'lpExistingFileName', 'lpPathName', 'FileName');
}

/** The destination of a move or copy. */
export function newFilePathOf(event: WinCall): string | undefined {
  return stringArg(event, 'newfilepath', 'lpNewFileName');
}

const GENERIC_WRITE = 0x40000000;
const GENERIC_ALL = 0x10000000;
const FILE_WRITE_DATA = 0x2;
const FILE_APPEND_DATA = 0x4;
const CREATE_NEW = 1;
const CREATE_ALWAYS = 2;

/** Whether a CreateFile call opens its file for writing. */
export function opensForWriting(event: WinCall): boolean {
  if (baseApi(event) !== 'CreateFile' && baseApi(event) !== 'CreateFile2' && baseApi(event) !== 'NtCreateFile') return false;
  const access = dwordArg(event, 'dwDesiredAccess', 'DesiredAccess', 'desired_access') ?? 0;
  return (access & (GENERIC_WRITE | GENERIC_ALL | FILE_WRITE_DATA | FILE_APPEND_DATA)) !== 0;
}

/** Whether a CreateFile call makes a new file or replaces one (CREATE_NEW, CREATE_ALWAYS). */
export function createsFile(event: WinCall): boolean {
  const disposition = dwordArg(event, 'dwCreationDisposition', 'create_disposition');
  return opensForWriting(event) && (disposition === CREATE_NEW || disposition === CREATE_ALWAYS);
}

export function windowsBasename(path: string): string {
  return path.slice(path.lastIndexOf('\\') + 1);
}

export function windowsDirname(path: string): string {
  const index = path.lastIndexOf('\\');
  return index < 0 ? '' : path.slice(0, index);
}
