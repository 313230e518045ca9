import { useEffect, useState } from 'preact/hooks';
import { loadSection } from './analysis-api';
import type { Report } from './report';

export type Loaded<T> = { state: 'loading' } | { state: 'done'; value: T } | { state: 'failed'; message: string };

/** A section of the task's report, read when the component that shows it first renders. */
export function useSection<K extends keyof Report>(id: number, key: K): Loaded<Report[K] | null> {
  const [loaded, setLoaded] = useState<Loaded<Report[K] | null>>({ state: 'loading' });
  useEffect(() => {
    const abort = new AbortController();
    setLoaded({ state: 'loading' });
    loadSection(id, key, abort.signal).then(
      (value) => setLoaded({ state: 'done', value }),
      (error: Error) => abort.signal.aborted || setLoaded({ state: 'failed', message: error.message }),
    );
    return () => abort.abort();
  }, [id, key]);
  return loaded;
}
