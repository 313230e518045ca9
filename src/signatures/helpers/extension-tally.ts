import { appendedExtension, originalOf, type PathStyle } from './appended-extension.js';

/** Files that must get the same new extension before it looks like encryption rather than housekeeping. */
export const MIN_RENAMED_FILES = 10;

export interface WidespreadExtension<E> {
  extension: string;
  /** How many files got it. */
  files: number;
  /** The events that show it: each rename, or each copy's creation and its original's deletion. */
  events: E[];
}

/**
 * The files a program gave each new extension, the two ways ransomware does it: a move in place
 * (report.docx -> report.docx.locked), or a copy written with the extension and the original deleted.
 * Shared by the Linux and Windows mass-rename signatures; the path style says how paths compare (Windows
 * ones without case, extensions too).
 */
export class ExtensionTally<E> {
  /** New extension -> the files that got it, with the events that show it. */
  readonly #byExtension = new Map<string, Map<string, E[]>>();
  /** Original -> a copy created with an extension appended, waiting for the original's deletion. */
  readonly #copies = new Map<string, { extension: string; event: E }>();

  constructor(private readonly style: PathStyle) {}

  /** A file moved or renamed: counted when the new name is the old one with an extension appended. */
  moved(from: string, to: string, event: E): void {
    const extension = appendedExtension(from, to, this.style);
    if (extension) this.#record(extension, from, [event]);
  }

  /** A file created for writing: remembered when its name is another file's with an extension appended. */
  created(path: string, event: E): void {
    const original = originalOf(path, this.style);
    if (original) this.#copies.set(this.#key(original.path), { extension: original.extension, event });
  }

  /** A file deleted: counted when a copy of it with an extension appended was created before. */
  deleted(path: string, event: E): void {
    const copy = this.#copies.get(this.#key(path));
    if (copy) this.#record(copy.extension, path, [copy.event, event]);
  }

  /** The extensions given to at least MIN_RENAMED_FILES files. */
  *widespread(): Generator<WidespreadExtension<E>> {
    for (const [extension, files] of this.#byExtension) {
      if (files.size >= MIN_RENAMED_FILES) yield { extension, files: files.size, events: [...files.values()].flat() };
    }
  }

  #record(extension: string, file: string, events: E[]): void {
    const key = this.#key(extension);
    const files = this.#byExtension.get(key) ?? new Map<string, E[]>();
    files.set(this.#key(file), events);
    this.#byExtension.set(key, files);
  }

  #key(text: string): string {
    return this.style.caseless ? text.toLowerCase() : text;
  }
}
