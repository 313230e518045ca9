/**
 * Safe HTML building. Everything in a report may come from the sample (file names, command lines, DNS
 * names, HTTP headers), so every value is escaped unless it is markup this module built: the `html` tag
 * escapes each interpolation that is not already SafeHtml. There is no other way to put text into a page.
 */
export class SafeHtml {
  constructor(readonly text: string) {}

  toString(): string {
    return this.text;
  }
}

type Interpolation = SafeHtml | string | number | boolean | null | undefined | readonly Interpolation[];

export function html(strings: TemplateStringsArray, ...values: Interpolation[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, index) => {
    out += render(value) + (strings[index + 1] ?? '');
  });
  return new SafeHtml(out);
}

function render(value: Interpolation): string {
  if (value instanceof SafeHtml) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * Text for element content and quoted attributes. Control characters (which a page cannot show and some
 * browsers mangle) are written out as \xNN so the analyst sees they are there.
 */
export function escapeHtml(text: string): string {
  return text
    .replace(/[&<>"']/g, (char) => ENTITIES[char] ?? char)
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g, (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** At most `max` characters of a text, saying how much was cut. */
export function clip(text: string, max = 2000): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}
