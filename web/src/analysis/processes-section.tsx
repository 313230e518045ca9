/** The process tree, and below it the calls of the process chosen in it. */
import { useEffect, useState } from 'preact/hooks';
import { Behaviour } from './behaviour';
import { type CallsSource, openCallsSource } from './calls-source';
import { ProcessTree } from './process-tree';
import type { ProcessRow } from './report';

export function ProcessesSection({ id }: { id: number }) {
  const [opened, setOpened] = useState<{ source: CallsSource; processes: ProcessRow[] } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [pid, setPid] = useState<number | null>(null);
  useEffect(() => {
    const abort = new AbortController();
    openCallsSource(id, abort.signal).then(setOpened, (e: Error) => abort.signal.aborted || setError(e.message));
    return () => abort.abort();
  }, [id]);
  if (error) return <p class="error">{error}</p>;
  if (!opened) return <p class="muted">Loading processes…</p>;
  return (
    <section class="processes">
      <h2>Process tree</h2>
      <ProcessTree processes={opened.processes} selected={pid} onSelect={setPid} />
      <h2>Behaviour{pid === null ? ': all processes' : `: pid ${pid}`}</h2>
      <Behaviour source={opened.source} pid={pid} />
    </section>
  );
}
