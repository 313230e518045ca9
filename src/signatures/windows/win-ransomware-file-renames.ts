import type { PathStyle } from '../helpers/appended-extension.js';
import { ExtensionTally } from '../helpers/extension-tally.js';
import { baseApi, type WinCall } from '../helpers/windows-calls.js';
import { createsFile, filePathOf, newFilePathOf, windowsBasename, windowsDirname } from '../helpers/windows-files.js';
import type { SignatureContext, SignatureInfo } from '../signature.js';
import { WindowsCallSignature } from './windows-call-signature.js';

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

  readonly #tally = new ExtensionTally<WinCall>(WINDOWS);

  protected onCall(event: WinCall): void {
    const api = baseApi(event);
    const path = filePathOf(event);
    if (path === undefined) return;
    if (MOVES.has(api)) this.#tally.moved(path, newFilePathOf(event) ?? '', event);
    else if (createsFile(event)) this.#tally.created(path, event);
    else if (DELETES.has(api)) this.#tally.deleted(path, event);
  }

  override onComplete(ctx: SignatureContext): void {
    for (const { extension, files, events } of this.#tally.widespread()) {
      this.markIoc('extension', `.${extension}`, `${files} files given this extension`);
      for (const event of events) this.markEvent(event, ctx);
    }
  }
}
