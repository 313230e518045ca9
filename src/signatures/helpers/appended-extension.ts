/**
 * How ransomware renames files: the same extension appended to the whole name (report.docx ->
 * report.docx.locked). Shared by the Linux and Windows mass-rename signatures; each passes its own path
 * rules (separator, and whether case matters).
 */

/** What counts as an extension a program appends (not a second name or a path). */
const EXTENSION = /^[A-Za-z0-9_~!@#$%^&()+=-]{1,24}$/;

export interface PathStyle {
  dirname(path: string): string;
  basename(path: string): string;
  /** Windows paths: compare without case. */
  caseless: boolean;
}

/** `/a/b.doc` -> `/a/b.doc.locked` gives `locked`; any other move gives null. */
export function appendedExtension(from: string, to: string, style: PathStyle): string | null {
  const same = (a: string, b: string) => (style.caseless ? a.toLowerCase() === b.toLowerCase() : a === b);
  if (!same(style.dirname(from), style.dirname(to)) || !same(to.slice(0, from.length + 1), `${from}.`)) return null;
  const extension = to.slice(from.length + 1);
  return EXTENSION.test(extension) ? extension : null;
}

/** `/a/b.doc.locked` -> the original `/a/b.doc` and the extension `locked`; a name with one dot gives null. */
export function originalOf(path: string, style: PathStyle): { path: string; extension: string } | null {
  const name = style.basename(path);
  const dot = name.lastIndexOf('.');
  if (dot <= 0 || !name.slice(0, dot).includes('.')) return null;
  const extension = name.slice(dot + 1);
  return EXTENSION.test(extension) ? { path: path.slice(0, path.length - extension.length - 1), extension } : null;
}
