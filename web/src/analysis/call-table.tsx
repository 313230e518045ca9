/** Calls as a table: when, which process and thread, what, with which arguments, and what it returned. */
import { asText, formatEpoch } from './format';
import type { CallRow } from './report';
import { argumentsText } from './signatures';

export function CallTable({ calls, total, empty }: { calls: readonly CallRow[]; total: number; empty: string }) {
  if (total === 0) return <p class="muted">{empty}</p>;
  return (
    <table class="calls compact" data-total={total}>
      <thead>
        <tr>
          <th>Time</th>
          <th>Pid</th>
          <th>Tid</th>
          <th>Category</th>
          <th>Call</th>
          <th>Arguments</th>
          <th>Return</th>
        </tr>
      </thead>
      <tbody>
        {calls.map((call, index) => (
          <tr key={index} class={call.status ? 'call' : 'call failed'}>
            <td class="mono nowrap">{formatEpoch(call.time).slice(11)}</td>
            <td>{call.pid}</td>
            <td>{call.tid}</td>
            <td>{asText(call.category)}</td>
            <td class="mono api">
              {asText(call.api)}
              {call.repeated ? <span class="muted"> ×{call.repeated + 1}</span> : null}
            </td>
            <td class="mono">{argumentsText(call.arguments)}</td>
            <td class="mono">{asText(call.return)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
