/** A running task as it happens: its process tree and its latest calls, newest first. */
import { useMemo, useState } from 'preact/hooks';
import { CallTable } from './call-table';
import { usePage } from './pager';
import { ProcessTree } from './process-tree';
import type { LiveTask } from './use-live-task';

export function LiveView({ live }: { live: LiveTask }) {
  const [pid, setPid] = useState<number | null>(null);
  const calls = useMemo(() => live.calls.filter((call) => pid === null || call.pid === pid).reverse(), [live.calls, pid]);
  const { rows, pager } = usePage(calls, 50);
  return (
    <section class="live">
      <p class="live-note">
        <span class="pulse" /> Live: the analysis is running{live.state ? ` (${live.state})` : ''}; the full report opens when it is done.
      </p>
      <h2>Process tree</h2>
      <ProcessTree processes={live.processes} selected={pid} onSelect={setPid} />
      <h2>Events ({calls.length})</h2>
      {live.skipped > 0 ? <p class="muted">{live.skipped} more calls were made than the live view shows; the report lists them all.</p> : null}
      <CallTable calls={rows} total={calls.length} empty="No event yet." />
      {pager}
    </section>
  );
}
