import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ScoreBadge } from '../components/badges';
import { formatBytes } from '../components/format';
import { analysisHref, compareHref } from '../components/links';
import { useJson } from '../components/use-json';
import { DiffSection } from '../compare/diff-section';
import { compareReports } from '../compare/report-diff.js';
import type { ComparableReport } from '../compare/report-shape.js';
import './pages.css';

/** Two analyses side by side (?left=&right=): score, signatures, processes, files and network. */
export function ComparePage() {
  const { query, route } = useLocation();
  const left = taskId(query.left);
  const right = taskId(query.right);
  const [leftText, setLeftText] = useState(query.left ?? '');
  const [rightText, setRightText] = useState(query.right ?? '');
  const [formError, setFormError] = useState<string | null>(null);
  const leftReport = useJson<ComparableReport>(left === null || right === null ? null : reportPath(left));
  const rightReport = useJson<ComparableReport>(left === null || right === null ? null : reportPath(right));
  const error = formError ?? failure(left, leftReport.error) ?? failure(right, rightReport.error);

  useEffect(() => {
    setLeftText(query.left ?? '');
    setRightText(query.right ?? '');
    setFormError(null);
  }, [query.left, query.right]);

  const pick = (event: Event) => {
    event.preventDefault();
    const a = taskId(leftText);
    const b = taskId(rightText);
    if (a === null || b === null) return setFormError('Give two task ids.');
    route(compareHref(a, b));
  };

  return (
    <>
      <h1>Compare</h1>
      <form class="compare-form" onSubmit={pick}>
        <label>
          Left task
          <input name="left" type="number" min={1} required value={leftText} onInput={(e) => setLeftText(e.currentTarget.value)} />
        </label>
        <label>
          Right task
          <input name="right" type="number" min={1} required value={rightText} onInput={(e) => setRightText(e.currentTarget.value)} />
        </label>
        <button type="submit" class="primary">
          Compare
        </button>
      </form>
      {error && <p class="error">{error}</p>}
      {leftReport.data && rightReport.data && left !== null && right !== null && <Comparison left={left} right={right} reports={[leftReport.data, rightReport.data]} />}
    </>
  );
}

function Comparison({ left, right, reports }: { left: number; right: number; reports: [ComparableReport, ComparableReport] }) {
  const diff = compareReports(reports[0], reports[1]);
  const ids = { leftId: left, rightId: right };
  const text = (value: string) => <span class="mono">{value}</span>;
  return (
    <>
      <table class="dense compare-head">
        <thead>
          <tr>
            <th />
            <th>
              <a href={analysisHref(left)}>Task #{left}</a>
            </th>
            <th>
              <a href={analysisHref(right)}>Task #{right}</a>
            </th>
          </tr>
        </thead>
        <tbody>
          <tr>
            <th>Target</th>
            <td class="mono">{targetOf(reports[0])}</td>
            <td class="mono">{targetOf(reports[1])}</td>
          </tr>
          <tr id="compare-score">
            <th>Score</th>
            <td>
              <ScoreBadge score={diff.score.left} />
            </td>
            <td>
              <ScoreBadge score={diff.score.right} />
            </td>
          </tr>
        </tbody>
      </table>
      <DiffSection
        title="Signatures"
        diff={diff.signatures}
        {...ids}
        render={(signature) => (
          <>
            <span class={`severity severity-${Math.min(3, Math.max(1, signature.severity))}`}>{signature.name}</span> <span class="muted">{signature.description}</span>
          </>
        )}
      />
      <DiffSection
        title="Processes"
        diff={diff.processes}
        {...ids}
        render={(process) => (
          <>
            <strong>{process.name}</strong> <span class="mono muted">{process.commandLine}</span>
          </>
        )}
      />
      <DiffSection
        title="Dropped files"
        diff={diff.dropped}
        {...ids}
        render={(file) => (
          <>
            <span class="mono">{file.path}</span> <span class="muted">{formatBytes(file.size)}</span> <span class="mono muted">{file.sha256.slice(0, 16)}</span>
          </>
        )}
      />
      <DiffSection title="Files written" diff={diff.written} {...ids} render={text} />
      <DiffSection title="Domains" diff={diff.domains} {...ids} render={text} />
      <DiffSection title="Hosts" diff={diff.hosts} {...ids} render={text} />
      <DiffSection title="HTTP requests" diff={diff.http} {...ids} render={text} />
    </>
  );
}

const reportPath = (id: number) => `/tasks/report/${id}/json`;

const failure = (id: number | null, error: string | null) => (error === null ? null : `Task ${id}: ${error}`);

function taskId(text: string | undefined): number | null {
  const id = Number(text);
  return Number.isSafeInteger(id) && id > 0 ? id : null;
}

function targetOf(report: ComparableReport): string {
  const target = report.target;
  return target?.url ?? target?.filename ?? target?.file?.name ?? '–';
}
