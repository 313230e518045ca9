import type { BehaviorEvent } from '../../report/events.js';
import { appendedExtension, originalOf, type PathStyle } from '../helpers/appended-extension.js';
import { openAccess } from '../helpers/file-access.js';
import { basename, dirname } from '../helpers/paths.js';
import { Signature, type EventOf, type SignatureContext, type SignatureInfo } from '../signature.js';

type Kind = 'file.rename' | 'file.open' | 'file.delete';

/** Files that must get the same new extension before it looks like encryption rather than housekeeping. */
const MIN_FILES = 10;
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

  /** New extension -> the files that got it, with the events that show it. */
  readonly #byExtension = new Map<string, Map<string, BehaviorEvent[]>>();
  /** Original path -> a copy created with an extension appended. */
  readonly #copies = new Map<string, { extension: string; event: BehaviorEvent }>();

  override onEvent(event: EventOf<Kind>): void {
    if (event.kind === 'file.rename') {
      const extension = appendedExtension(event.from, event.to, POSIX);
      if (extension) this.#record(extension, event.from, [event]);
    } else if (event.kind === 'file.open') {
      const access = openAccess(event.flags);
      const original = originalOf(event.path, POSIX);
      if (original && access.includes('create') && access.includes('write')) this.#copies.set(original.path, { extension: original.extension, event });
    } else {
      const copy = this.#copies.get(event.path);
      if (copy) this.#record(copy.extension, event.path, [copy.event, event]);
    }
  }

  override onComplete(ctx: SignatureContext): void {
    for (const [extension, files] of this.#byExtension) {
      if (files.size < MIN_FILES) continue;
      this.markIoc('extension', `.${extension}`, `${files.size} files given this extension`);
      for (const events of files.values()) for (const event of events) this.markEvent(event, ctx);
    }
  }

  #record(extension: string, file: string, events: BehaviorEvent[]): void {
    const files = this.#byExtension.get(extension) ?? new Map<string, BehaviorEvent[]>();
    files.set(file, events);
    this.#byExtension.set(extension, files);
  }
}
