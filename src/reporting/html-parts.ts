import { clip, html, type SafeHtml } from './html-escape.js';

/** Rows shown per table; the rest stay in report.json. Keeps the page usable for huge analyses. */
export const MAX_ROWS = 500;

type Cell = Parameters<typeof html>[1];

export function section(id: string, title: string, body: SafeHtml, count?: number): SafeHtml {
  return html`<section id="${id}"><h2>${title}${count === undefined ? '' : html` <span class="count">${count}</span>`}</h2>${body}</section>`;
}

export function table(headers: readonly string[], rows: readonly (readonly Cell[])[], limit = MAX_ROWS): SafeHtml {
  if (rows.length === 0) return html`<p class="empty">None.</p>`;
  const shown = rows.slice(0, limit);
  return html`<div class="scroll"><table><thead><tr>${headers.map((header) => html`<th>${header}</th>`)}</tr></thead><tbody>${shown.map(
    (row) => html`<tr>${row.map((cell) => html`<td>${cell}</td>`)}</tr>`,
  )}</tbody></table></div>${more(rows.length, shown.length)}`;
}

/** A two-column table of labelled facts. */
export function facts(pairs: ReadonlyArray<readonly [string, Cell]>): SafeHtml {
  return html`<table class="facts"><tbody>${pairs.map(([label, value]) => html`<tr><th>${label}</th><td>${value}</td></tr>`)}</tbody></table>`;
}

export function more(total: number, shown: number): SafeHtml {
  return html`${total > shown ? html`<p class="more">${total - shown} more not shown here; report.json has them all.</p>` : ''}`;
}

/** Monospace text for values a sample chose (paths, command lines, names), clipped. */
export function code(text: string | number | null | undefined, max = 2000): SafeHtml {
  const value = String(text ?? '');
  return value === '' ? html`` : html`<code>${clip(value, max)}</code>`;
}

/** Epoch seconds as UTC date and time. */
export function time(epoch: number | null | undefined): string {
  if (typeof epoch !== 'number' || !Number.isFinite(epoch)) return '';
  return new Date(epoch * 1000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

export function bytes(size: number | null | undefined): string {
  if (typeof size !== 'number') return '';
  const units = ['bytes', 'KiB', 'MiB', 'GiB'];
  let value = size;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${size} bytes` : `${value.toFixed(1)} ${units[unit]} (${size} bytes)`;
}

/**
 * Any JSON value as nested tables and lists, for sections whose shape depends on the file type (static).
 * Depth and length are bounded so that no report can make the page explode.
 */
export function anyValue(value: unknown, depth = 0): SafeHtml {
  if (value === null || value === undefined) return html`<span class="empty">none</span>`;
  if (typeof value !== 'object') return code(String(value), 500);
  if (depth >= 5) return code(clip(JSON.stringify(value), 500));
  if (Array.isArray(value)) {
    if (value.length === 0) return html`<span class="empty">none</span>`;
    const records = value.every((item) => item !== null && typeof item === 'object' && !Array.isArray(item));
    if (records) {
      const headers = [...new Set(value.slice(0, 100).flatMap((item) => Object.keys(item as object)))].slice(0, 12);
      return table(
        headers,
        value.map((item) => headers.map((header) => anyValue((item as Record<string, unknown>)[header], depth + 1))),
        200,
      );
    }
    return html`<ul class="values">${value.slice(0, 200).map((item) => html`<li>${anyValue(item, depth + 1)}</li>`)}</ul>${more(value.length, Math.min(200, value.length))}`;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return html`<span class="empty">none</span>`;
  return facts(entries.slice(0, 200).map(([key, item]) => [key, anyValue(item, depth + 1)] as const));
}
