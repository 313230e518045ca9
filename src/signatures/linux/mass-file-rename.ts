import type { BehaviorEvent } from '../../report/events.js';
import type { PathStyle } from '../helpers/appended-extension.js';
import { ExtensionTally } from '../helpers/extension-tally.js';
import { openAccess } from '../helpers/file-access.js';
import { basename, dirname } from '../helpers/paths.js';
import { Signature, type EventOf, type SignatureContext, type SignatureInfo } from '../signature.js';

type Kind = 'file.rename' | 'file.open' | 'file.delete';

const POSIX: PathStyle = { dirname, basename, caseless: false };

/**
 * Mass renaming: many files given the same new extension, renamed in place (a.doc -> a.doc.locked) or
 * rewritten as a copy with the extension while the original is deleted. That is how file-encrypting
 * ransomware leaves a disk.
 */
export class MassFileRename extends Signature<Kind> {
  readonly info: SignatureInfo = {
    name: 'mass_file_rename',
    description: 'Mass renaming of files: gives many files the same new extension (renamed, or rewritten and the original deleted), as file-encrypting ransomware does',
    severity: 5,
    categories: ['ransomware'],
    ttp: ['T1486'],
  };
  override readonly kinds: readonly Kind[] = ['file.rename', 'file.open', 'file.delete'];

  readonly #tally = new ExtensionTally<BehaviorEvent>(POSIX);

  override onEvent(event: EventOf<Kind>): void {
    if (event.kind === 'file.rename') this.#tally.moved(event.from, event.to, event);
    else if (event.kind === 'file.open') {
      const access = openAccess(event.flags);
      if (access.includes('create') && access.includes('write')) this.#tally.created(event.path, event);
    } else this.#tally.deleted(event.path, event);
  }

  override onComplete(ctx: SignatureContext): void {
    for (const { extension, files, events } of this.#tally.widespread()) {
      this.markIoc('extension', `.${extension}`, `${files} files given this extension`);
      for (const event of events) this.markEvent(event, ctx);
    }
  }
}
