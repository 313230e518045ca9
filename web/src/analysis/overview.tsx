/** The task at a glance: verdict, what was analysed, where and when, and what went wrong. */
import { downloads } from './analysis-api';
import { DownloadLink } from './download-link';
import { formatBytes, formatDuration, scoreLevel, SCORE_WORDS, asText } from './format';
import type { FileInfo, Report, TaskView } from './report';

export function Overview({ task, report }: { task: TaskView; report: Report | null }) {
  return (
    <section class="overview">
      <div class="overview-head">
        <ScoreBadge score={report?.info?.score ?? null} />
        <dl class="fields">
          <Field name="State">
            <span class={`state state-${task.status}`}>{task.status}</span>
          </Field>
          <Field name="Category">{task.category}</Field>
          <Field name="Machine">{machineOf(task, report)}</Field>
          <Field name="Package">{report?.info?.package || task.package || 'auto'}</Field>
          <Field name="Route">{report?.info?.route ?? task.route ?? 'none'}</Field>
          <Field name="Platform">{report?.info?.platform || task.platform || '—'}</Field>
          {report?.info?.tracer ? <Field name="Tracer">{report.info.tracer}</Field> : null}
          {report?.info?.events_lost ? <Field name="Events lost">{String(report.info.events_lost)}</Field> : null}
        </dl>
      </div>
      <h2>Target</h2>
      <Target task={task} report={report} />
      <h2>Timings</h2>
      <dl class="fields">
        <Field name="Added">{task.added_on ?? '—'}</Field>
        <Field name="Started">{task.started_on ?? '—'}</Field>
        <Field name="Completed">{task.completed_on ?? '—'}</Field>
        <Field name="Duration">{formatDuration(report?.info?.duration ?? task.duration)}</Field>
        <Field name="Timeout">{`${task.timeout} s`}</Field>
      </dl>
      <h2>Errors</h2>
      {/* The report's debug.errors are these same task errors. */}
      <ErrorList errors={task.errors} />
    </section>
  );
}

export function ScoreBadge({ score }: { score: number | null }) {
  if (score === null) return <div class="score score-none">no score yet</div>;
  const level = scoreLevel(score);
  return (
    <div class={`score level-${level}`} title={SCORE_WORDS[level]}>
      <span class="score-value">{score.toFixed(1)}</span>
      <span class="score-word">{SCORE_WORDS[level]}</span>
    </div>
  );
}

function Target({ task, report }: { task: TaskView; report: Report | null }) {
  const target = report?.target;
  if (task.category === 'url' || target?.category === 'url') {
    return (
      <dl class="fields">
        <Field name="URL">
          <span class="mono">{asText(target?.url ?? task.target)}</span>
        </Field>
      </dl>
    );
  }
  const file: Partial<FileInfo> = target?.file ?? {
    name: task.target.split('/').pop() ?? task.target,
    size: task.sample.file_size,
    type: task.sample.file_type,
    md5: task.sample.md5,
    sha1: task.sample.sha1,
    sha256: task.sample.sha256,
  };
  return (
    <>
      <dl class="fields">
        <Field name="File name">
          <span class="mono target-name">{asText(target?.human ?? file.name)}</span>
        </Field>
        <Field name="Type">{asText(file.type)}</Field>
        <Field name="Size">{formatBytes(file.size)}</Field>
        {(['md5', 'sha1', 'sha256', 'sha512', 'ssdeep'] as const).map((hash) =>
          file[hash] ? (
            <Field key={hash} name={hash.toUpperCase()}>
              <span class="mono">{asText(file[hash])}</span>
            </Field>
          ) : null,
        )}
      </dl>
      <DownloadLink href={downloads.sample(task.id)} label="Download the sample" />
    </>
  );
}

function machineOf(task: TaskView, report: Report | null): string {
  const machine = report?.info?.machine as { name?: unknown; label?: unknown; manager?: unknown } | undefined;
  if (machine?.name) return [machine.name, machine.manager].filter(Boolean).map(asText).join(' · ');
  return task.machine ?? 'any';
}

function ErrorList({ errors }: { errors: string[] }) {
  if (errors.length === 0) return <p class="muted">none</p>;
  return (
    <ul class="errors">
      {errors.map((error, index) => (
        <li key={index} class="mono">
          {asText(error)}
        </li>
      ))}
    </ul>
  );
}

export function Field({ name, children }: { name: string; children: preact.ComponentChildren }) {
  return (
    <div>
      <dt>{name}</dt>
      <dd>{children}</dd>
    </div>
  );
}
