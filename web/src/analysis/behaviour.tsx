/**
 * The calls of the selected process (or of all), filtered by system call name, category and argument
 * text, a page at a time as the calls source gives them (the server paginates).
 */
import { useEffect, useState } from 'preact/hooks';
import type { CallPage, CallQuery } from './analysis-api';
import type { CallsSource } from './calls-source';
import { Pager } from './pager';
import { CallTable } from './call-table';
import { CALL_CATEGORIES } from '../../../src/report/call-categories';

const PAGE = 100;

interface Filters {
  api: string;
  category: string;
  q: string;
}

export function Behaviour({ source, pid }: { source: CallsSource; pid: number | null }) {
  const [typed, setTyped] = useState<Filters>({ api: '', category: '', q: '' });
  const filters = useDebounced(typed, 250);
  const [offset, setOffset] = useState(0);
  const [page, setPage] = useState<CallPage | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => setOffset(0), [pid, filters]);
  useEffect(() => {
    const abort = new AbortController();
    const query: CallQuery = { pid, ...filters, offset, limit: PAGE };
    source.calls(query, abort.signal).then(
      (next) => {
        setPage(next);
        setError(null);
      },
      (e: Error) => abort.signal.aborted || setError(e.message),
    );
    return () => abort.abort();
  }, [source, pid, filters, offset]);

  const set = (key: keyof Filters) => (event: Event) => setTyped({ ...typed, [key]: (event.currentTarget as HTMLInputElement).value });
  return (
    <div class="behaviour">
      <form class="call-filters" onSubmit={(event) => event.preventDefault()}>
        <label>
          System call <input name="api" placeholder="e.g. openat,connect" value={typed.api} onInput={set('api')} />
        </label>
        <label>
          Category{' '}
          <select name="category" value={typed.category} onChange={set('category')}>
            <option value="">any</option>
            {CALL_CATEGORIES.map((category) => (
              <option key={category} value={category}>
                {category}
              </option>
            ))}
          </select>
        </label>
        <label>
          Arguments contain <input name="q" value={typed.q} onInput={set('q')} />
        </label>
      </form>
      {error ? <p class="error">{error}</p> : null}
      {page === null ? <p class="muted">Loading calls…</p> : <CallTable calls={page.calls} total={page.total} empty="No call matches." />}
      {page ? <Pager offset={offset} size={PAGE} total={page.total} onOffset={setOffset} /> : null}
    </div>
  );
}

/** `value`, once it has stopped changing for `ms`. */
function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}
