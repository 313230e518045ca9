import { baseApi, stringArg, type WinCall } from '../helpers/windows-calls.js';
import { executedFileOf, startsProgram } from '../helpers/windows-commands.js';
import { filePathOf, newFilePathOf, opensForWriting, windowsBasename } from '../helpers/windows-files.js';
import type { SignatureContext, SignatureInfo } from '../signature.js';
import { WindowsCallSignature } from './windows-call-signature.js';

/** Calls that fetch a URL straight into a file: the download and the file in one call. */
const TO_FILE = new Set(['URLDownloadToFile', 'URLDownloadToCacheFile']);
/** Calls that fetch data from the network into the program, which it may then write to a file. */
const FETCHES = new Set([
  'InternetOpenUrl', 'InternetReadFile', 'InternetReadFileEx', 'HttpSendRequest', 'HttpSendRequestEx', 'WinHttpSendRequest', 'WinHttpReadData',
  'URLOpenBlockingStream', 'URLOpenStream', 'recv', 'WSARecv', 'recvfrom', 'FtpGetFile',
]);
const LOADS = new Set(['LoadLibrary', 'LoadLibraryEx']);
/** Downloaded files followed at most: a log writing millions of files must not hold them all. */
const MAX_DOWNLOADS = 10_000;

interface Download {
  fetch: WinCall;
  write?: WinCall;
}

/**
 * A file fetched from the network and then run (CreateProcess, ShellExecute, WinExec) or loaded
 * (LoadLibrary): URLDownloadToFile, or a network read followed by writing a file, in the same process.
 */
export class WinDownloadAndExecute extends WindowsCallSignature {
  readonly info: SignatureInfo = {
    name: 'win_download_and_execute',
    description: 'Downloads a file from the network and then runs or loads it',
    severity: 4,
    categories: ['downloader'],
    ttp: ['T1105'],
  };

  /** Process -> its first network fetch. */
  readonly #fetched = new Map<number, WinCall>();
  /** Lower-case path -> how it got there; and the same by file name, for relative paths. */
  readonly #byPath = new Map<string, Download>();
  readonly #byName = new Map<string, Download>();

  protected onCall(event: WinCall, ctx: SignatureContext): void {
    const api = baseApi(event);
    if (TO_FILE.has(api)) this.#downloaded(stringArg(event, 'szFileName', 'filepath'), { fetch: event });
    else if (FETCHES.has(api)) {
      if (!this.#fetched.has(event.pid)) this.#fetched.set(event.pid, event);
    } else if (opensForWriting(event)) {
      const fetch = this.#fetched.get(event.pid);
      if (fetch) this.#downloaded(filePathOf(event), { fetch, write: event });
    } else if (newFilePathOf(event) !== undefined) {
      const moved = this.#find(filePathOf(event));
      if (moved) this.#downloaded(newFilePathOf(event), moved);
    } else if (startsProgram(event) || LOADS.has(api)) {
      const run = this.#find(startsProgram(event) ? executedFileOf(event) : stringArg(event, 'lpLibFileName', 'filepath', 'module_name'));
      if (!run) return;
      for (const step of [run.fetch, run.write, event]) if (step) this.markEvent(step, ctx);
    }
  }

  #downloaded(path: string | undefined, download: Download): void {
    if (path === undefined || this.#byPath.size >= MAX_DOWNLOADS) return;
    this.#byPath.set(path.toLowerCase(), download);
    this.#byName.set(windowsBasename(path).toLowerCase(), download);
  }

  /** The download a path names: by full path, else by file name when the path is relative. */
  #find(path: string | undefined): Download | undefined {
    if (path === undefined) return undefined;
    const exact = this.#byPath.get(path.toLowerCase());
    if (exact || /^([a-z]:\\|\\\\)/i.test(path)) return exact;
    return this.#byName.get(windowsBasename(path).toLowerCase());
  }
}
