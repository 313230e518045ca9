import type { SignatureMark, SignatureMatch } from '../report/report-types.js';
import { clip, html, type SafeHtml } from './html-escape.js';
import { code, section } from './html-parts.js';

const SEVERITY_NAMES: Record<number, string> = { 1: 'info', 2: 'suspicious', 3: 'malicious', 4: 'high', 5: 'critical' };

/** Matched signatures, most severe first, each with what made it match. */
export function signatures(matches: readonly SignatureMatch[]): SafeHtml {
  const ordered = [...matches].sort((a, b) => b.severity - a.severity || a.name.localeCompare(b.name));
  const body = ordered.length === 0 ? html`<p class="empty">No signature matched.</p>` : html`${ordered.map(signature)}`;
  return section('signatures', 'Signatures', body, matches.length);
}

function signature(match: SignatureMatch): SafeHtml {
  const level = Math.min(5, Math.max(1, Math.round(match.severity)));
  const techniques = Object.entries(match.ttp ?? {});
  return html`<details class="signature sev${level}"${level >= 3 ? html` open` : ''}><summary><span class="severity">${SEVERITY_NAMES[level]}</span> <span class="description">${match.description}</span> <code class="name">${match.name}</code>${techniques.map(
    ([id, technique]) => html` <span class="ttp" title="${technique?.long ?? ''}">${id}${technique ? html` ${technique.short}` : ''}</span>`,
  )}</summary><ol class="marks">${match.marks.map((item) => html`<li>${mark(item)}</li>`)}</ol>${
    match.markcount > match.marks.length ? html`<p class="more">${match.markcount - match.marks.length} more marks not kept.</p>` : ''
  }</details>`;
}

function mark(item: SignatureMark): SafeHtml {
  if (item.type === 'call') {
    const call = (item.call ?? {}) as { api?: string; arguments?: Record<string, unknown>; return_value?: number; time?: number };
    const args = Object.entries(call.arguments ?? {}).map(([key, value]) => `${key}=${JSON.stringify(value)}`);
    return html`<span class="kind">call</span> pid ${String(item.pid ?? '')} ${code(`${call.api ?? ''}(${args.join(', ')})`, 1000)}${
      typeof call.return_value === 'number' ? html` → ${call.return_value}` : ''
    }`;
  }
  if (item.type === 'ioc') {
    return html`<span class="kind">${String(item.category ?? 'ioc')}</span> ${code(String(item.ioc ?? ''), 1000)}${item.description ? html` <span class="note">${clip(String(item.description), 500)}</span>` : ''}`;
  }
  const { type: _type, ...fields } = item;
  return html`<span class="kind">${item.type}</span> ${code(JSON.stringify(fields), 1000)}`;
}
