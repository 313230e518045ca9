import { appendedExtension, originalOf, type PathStyle } from '../helpers/appended-extension.js';
import { baseApi, type WinCall } from '../helpers/windows-calls.js';
import { createsFile, filePathOf, newFilePathOf, windowsBasename, windowsDirname } from '../helpers/windows-files.js';
import type { SignatureContext, SignatureInfo } from '../signature.js';
import { WindowsCallSignature } from './windows-call-signature.js';

/** Files that must get the same new extension before it looks like encryption rather than housekeeping. */
const MIN_FILES = 10;
const WINDOWS: PathStyle = { dirname: windowsDirname, basename: windowsBasename, caseless: true };
const MOVES = new Set(['MoveFile', 'MoveFileEx', 'MoveFileWithProgress', 'MoveFileTransacted', 'NtSetInformationFile', 'SetFileInformationByHandle']);
const DELETES = new Set(['DeleteFile', 'NtDeleteFile']);

/**
 * Ransomware-like renaming of many files on Windows: the same extension appended to many files, by a move
 * in place (report.docx -> report.docx.locked), or by writing an encrypted copy with the extension and
 * deleting the original.
 */
export class WinRansomwareFileRenames extends WindowsCallSignature {
  readonly info: SignatureInfo = {
    name: 'win_ransomware_file_renames',
    description: 'Gives many files the same new extension (renamed, or rewritten as a copy and the original deleted), as file-encrypting ransomware does',
    severity: 5,
    categories: ['ransomware'],
    ttp: ['T1486'],
  };

  /** New extension -> the files (lower case) that got it, with the calls that show it. */
  readonly #byExtension = new Map<string, Map<string, WinCall[]>>();
  /** Original (lower case) -> a copy created with an extension appended. */
  readonly #copies = new Map<string, { extension: string; event: WinCall }>();

  protected onCall(event: WinCall): void {
    const api = baseApi(event);
    const path = filePathOf(event);
    if (path === undefined) return;
    if (MOVES.has(api)) {
      const extension = appendedExtension(path, newFilePathOf(event) ?? '', WINDOWS);
      if (extension) this.#record(extension, path, [event]);
    } else if (createsFile(event)) {
      const original = originalOf(path, WINDOWS);
      if (original) this.#copies.set(original.path.toLowerCase(), { extension: original.extension, event });
    } else if (DELETES.has(api)) {
      const copy = this.#copies.get(path.toLowerCase());
      if (copy) this.#record(copy.extension, path, [copy.event, event]);
    }
  }

  override onComplete(ctx: SignatureContext): void {
    for (const [extension, files] of this.#byExtension) {
      if (files.size < MIN_FILES) continue;
      this.markIoc('extension', `.${extension}`, `${files.size} files given this extension`);
      for (const events of files.values()) for (const event of events) this.markEvent(event, ctx);
    }
  }

  #record(extension: string, file: string, events: WinCall[]): void {
    const key = extension.toLowerCase();
    const files = this.#byExtension.get(key) ?? new Map<string, WinCall[]>();
    files.set(file.toLowerCase(), events);
    this.#byExtension.set(key, files);
  }
}
