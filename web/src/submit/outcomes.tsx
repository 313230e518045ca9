import { analysisHref } from '../components/links';
import type { Outcome } from './submit-requests';

/** What the last submission made: task ids with links, and the server's messages for what it refused. */
export function Outcomes({ outcomes }: { outcomes: Outcome[] }) {
  if (outcomes.length === 0) return null;
  return (
    <section class="outcomes" aria-live="polite">
      <h2>Submitted</h2>
      <ul>
        {outcomes.map((outcome, index) => (
          <li key={index}>
            <span class="mono">{outcome.label}</span>
            {outcome.taskIds.length > 0 && ': '}
            {outcome.taskIds.map((id) => (
              <a key={id} class="task-id" href={analysisHref(id)}>
                task {id}
              </a>
            ))}
            {outcome.errors.map((error, n) => (
              <div key={n} class="error">
                {error}
              </div>
            ))}
          </li>
        ))}
      </ul>
    </section>
  );
}
