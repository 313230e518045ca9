import type { DroppedFile, Report } from '../report/report-types.js';
import { html, type SafeHtml } from './html-escape.js';
import { anyValue, bytes, code, more, section, table } from './html-parts.js';

const MAX_STRINGS = 1000;

export function dropped(files: readonly DroppedFile[] | undefined): SafeHtml {
  const list = files ?? [];
  return section(
    'dropped',
    'Dropped files',
    table(
      ['Path in the machine', 'Type', 'Size', 'SHA-256', 'Processes', 'YARA'],
      list.map((file) => [
        code(file.filepath || file.name, 500),
        file.type,
        file.truncated ? `${bytes(file.size)} kept of ${bytes(file.original_size)} (truncated; hashes of the kept bytes)` : bytes(file.size),
        code(file.sha256),
        (file.pids ?? []).join(', '),
        (file.yara ?? []).map((match) => match.name).join(', '),
      ]),
    ),
    list.length,
  );
}

export function staticInfo(report: Report): SafeHtml {
  const yara = report.target.file?.yara ?? [];
  const body = html`${yara.length > 0 ? html`<h3>YARA</h3>${table(['Rule', 'Description'], yara.map((match) => [code(match.name), match.meta?.description ?? '']))}` : ''}${
    report.static ? anyValue(report.static) : html`<p class="empty">No static analysis.</p>`
  }`;
  return section('static', 'Static analysis', body);
}

export function strings(list: readonly string[] | undefined): SafeHtml {
  const values = list ?? [];
  const body =
    values.length === 0
      ? html`<p class="empty">None.</p>`
      : html`<details><summary>Show ${Math.min(values.length, MAX_STRINGS)} strings</summary><pre class="strings">${values
          .slice(0, MAX_STRINGS)
          .map((value) => `${value.slice(0, 300)}\n`)}</pre>${more(values.length, Math.min(values.length, MAX_STRINGS))}</details>`;
  return section('strings', 'Strings', body, values.length);
}

export function errors(report: Report): SafeHtml {
  const list = report.debug?.errors ?? [];
  return list.length === 0 ? html`` : section('errors', 'Errors', html`<ul class="values">${list.map((error) => html`<li>${code(error, 2000)}</li>`)}</ul>`, list.length);
}
