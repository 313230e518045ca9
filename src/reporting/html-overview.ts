import type { Report } from '../report/report-types.js';
import { html, type SafeHtml } from './html-escape.js';
import { bytes, code, facts, section, time } from './html-parts.js';

export function scoreClass(score: number): string {
  if (score >= 8) return 'critical';
  if (score >= 5) return 'high';
  if (score >= 2) return 'medium';
  return 'low';
}

export function header(report: Report): SafeHtml {
  const score = Number(report.info.score) || 0;
  return html`<header><div><h1>Analysis ${report.info.id}</h1><p class="target">${code(targetName(report), 300)}</p></div><div class="score ${scoreClass(score)}" title="Score from 0 to 10"><span>${score.toFixed(1)}</span><small>/ 10</small></div></header>`;
}

export function targetName(report: Report): string {
  const { target } = report;
  if (target.category === 'url') return target.url ?? '';
  return target.category === 'archive' ? (target.human ?? '') : (target.file?.name ?? '');
}

type Fact = readonly [string, Parameters<typeof facts>[0][number][1]];

/** Which submitted archive the file was unpacked from, and where in it. */
function provenanceFacts(target: Report['target']): Fact[] {
  if (target.category !== 'archive') return [];
  return [
    ['From archive', code(target.archive?.name ?? '')],
    ['Path in archive', code(target.filename ?? '')],
    ['Archive type', target.archive?.type ?? ''],
    ['Archive SHA-256', code(target.archive?.sha256 ?? '')],
  ];
}

export function overview(report: Report): SafeHtml {
  const { info, target } = report;
  const file = target.file;
  const machine = info.machine as Record<string, unknown>;
  const targetFacts: Fact[] =
    target.category === 'url'
      ? [['URL', code(target.url ?? '')]]
      : [
          ['File name', code(file?.name ?? '')],
          ['Type', file?.type ?? ''],
          ['Size', bytes(file?.size)],
          ['MD5', code(file?.md5 ?? '')],
          ['SHA-1', code(file?.sha1 ?? '')],
          ['SHA-256', code(file?.sha256 ?? '')],
          ['SSDeep', code(file?.ssdeep ?? '')],
          ...provenanceFacts(target),
        ];
  const analysisFacts = [
    ['Category', info.category],
    ['Package', info.package],
    ['Platform', info.platform],
    ['Machine', String(machine?.name ?? machine?.label ?? '')],
    ['Route', info.route ?? ''],
    ['Options', code(info.options)],
    ['Started', time(info.started)],
    ['Ended', time(info.ended)],
    ['Duration', `${info.duration} s`],
    ['Tracer', info.tracer ?? ''],
    ['Events lost', info.events_lost ? html`<strong class="warn">${info.events_lost}</strong>` : '0'],
  ] as const;
  return section('overview', 'Overview', html`<div class="columns"><div><h3>Target</h3>${facts(targetFacts)}</div><div><h3>Analysis</h3>${facts(analysisFacts)}</div></div>`);
}

export function navigation(entries: ReadonlyArray<readonly [string, string]>): SafeHtml {
  return html`<nav>${entries.map(([id, title]) => html`<a href="#${id}">${title}</a>`)}</nav>`;
}
