import { formatScore } from './format';

/** A task's state, coloured by how it went. */
export function StateBadge({ state }: { state: string }) {
  const tone = state.startsWith('failed') ? 'bad' : state === 'reported' ? 'good' : state === 'running' ? 'busy' : 'idle';
  return <span class={`badge badge-${tone}`}>{state}</span>;
}

/** A report's score out of 10; none until the task is reported. */
export function ScoreBadge({ score }: { score: number | null | undefined }) {
  const tone = score === null || score === undefined ? 'idle' : score >= 7 ? 'bad' : score >= 4 ? 'warn' : 'good';
  return <span class={`badge badge-${tone}`}>{formatScore(score)}</span>;
}
