import { useEffect, useState } from 'preact/hooks';
import { getJson } from '../api';

export interface Fetched<T> {
  data: T | null;
  error: string | null;
}

/**
 * GET `path` (none while it is null) whenever it or `reloads` changes; an answer for a path the page
 * has since left is dropped, and the request is aborted.
 */
export function useJson<T>(path: string | null, reloads = 0): Fetched<T> {
  const [state, setState] = useState<Fetched<T>>({ data: null, error: null });
  useEffect(() => {
    if (path === null) return setState({ data: null, error: null });
    const abort = new AbortController();
    getJson<T>(path, abort.signal).then(
      (data) => setState({ data, error: null }),
      (e: Error) => {
        if (!abort.signal.aborted) setState((old) => ({ data: old.data, error: e.message }));
      },
    );
    return () => abort.abort();
  }, [path, reloads]);
  return state;
}
