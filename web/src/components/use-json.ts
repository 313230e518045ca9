import { useEffect, useState } from 'preact/hooks';
import { getJson } from '../api';

export interface Fetched<T> {
  /** The answer for the current path only: null while another path's answer is all there is. */
  data: T | null;
  error: string | null;
  /** The newest answer, for this path or the one before: a list keeps showing it while its next page loads. */
  latest: T | null;
}

/**
 * GET `path` (none while it is null) whenever it or `reloads` changes; the request for a path the page
 * has since left is aborted, and its answer dropped.
 */
export function useJson<T>(path: string | null, reloads = 0): Fetched<T> {
  const [state, setState] = useState<{ path: string | null; data: T | null; error: string | null }>({ path: null, data: null, error: null });
  useEffect(() => {
    if (path === null) return;
    const abort = new AbortController();
    getJson<T>(path, abort.signal).then(
      (data) => setState({ path, data, error: null }),
      (e: Error) => {
        if (!abort.signal.aborted) setState({ path, data: null, error: e.message });
      },
    );
    return () => abort.abort();
  }, [path, reloads]);
  return state.path === path ? { data: state.data, error: state.error, latest: state.data } : { data: null, error: null, latest: state.data };
}
