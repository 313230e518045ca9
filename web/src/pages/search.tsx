import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ScoreBadge } from '../components/badges';
import { formatTime } from '../components/format';
import { analysisHref, withQuery } from '../components/links';
import { useJson } from '../components/use-json';
import './pages.css';

const FIELDS = ['sha256', 'md5', 'sha1', 'ssdeep', 'imphash', 'filename', 'domain', 'ip', 'url', 'signature', 'attack', 'mutex', 'cmdline'];
const PAGE = 50;

interface SearchResult {
  id: number;
  target: string;
  score: number | null;
  category: string;
  added_on: string;
  matches: Array<{ field: string; value: string }>;
}

interface SearchAnswer {
  results: SearchResult[];
  total: number;
  tookMs: number;
}

/** One box across every analysis (GET /ui/api/search); the query lives in the URL. */
export function SearchPage() {
  const { query, route } = useLocation();
  const q = query.q ?? '';
  const field = query.field ?? '';
  const offset = Number(query.offset ?? 0) || 0;
  const [text, setText] = useState(q);
  const [chosen, setChosen] = useState(field);
  const path = q.trim() === '' ? null : withQuery('/ui/api/search', { q, field, limit: String(PAGE), offset: String(offset) });
  const { data: answer, error } = useJson<SearchAnswer>(path);

  useEffect(() => {
    setText(q);
    setChosen(field);
  }, [q, field]);

  const search = (event: Event) => {
    event.preventDefault();
    route(withQuery('/ui/search', { q: text.trim(), field: chosen }));
  };

  return (
    <>
      <h1>Search</h1>
      <form class="search-form" role="search" onSubmit={search}>
        <select name="field" aria-label="field" value={chosen} onInput={(e) => setChosen(e.currentTarget.value)}>
          <option value="">any field</option>
          {FIELDS.map((name) => (
            <option key={name}>{name}</option>
          ))}
        </select>
        <input name="q" type="search" aria-label="search text" value={text} onInput={(e) => setText(e.currentTarget.value)} placeholder="hash, file name, domain, IP, URL, signature, T1059, mutex, command line…" autofocus />
        <button type="submit" class="primary">
          Search
        </button>
      </form>
      {error && <p class="error">{error}</p>}
      {path && answer && <Results answer={answer} offset={offset} view={{ q, field }} />}
    </>
  );
}

function Results({ answer, offset, view }: { answer: SearchAnswer; offset: number; view: Record<string, string> }) {
  if (answer.total === 0) return <p class="muted">Nothing matches ({answer.tookMs.toFixed(0)} ms).</p>;
  const at = (from: number) => withQuery('/ui/search', { ...view, offset: from === 0 ? undefined : String(from) });
  return (
    <>
      <p class="muted" id="search-summary">
        {answer.total} analysis(es) in {answer.tookMs.toFixed(0)} ms
      </p>
      <table class="dense" id="search-results">
        <thead>
          <tr>
            <th>ID</th>
            <th>Target</th>
            <th>Score</th>
            <th>Added</th>
            <th>Matched</th>
          </tr>
        </thead>
        <tbody>
          {answer.results.map((result) => (
            <tr key={result.id} data-task={result.id}>
              <td>
                <a href={analysisHref(result.id)}>{result.id}</a>
              </td>
              <td class="target">
                <span class="muted">{result.category}</span> <span class="mono">{result.target}</span>
              </td>
              <td>
                <ScoreBadge score={result.score} />
              </td>
              <td class="nowrap">{formatTime(result.added_on)}</td>
              <td>
                {result.matches.map((match, n) => (
                  <div key={n} class="match">
                    <span class="field">{match.field}</span> <span class="mono">{match.value}</span>
                  </div>
                ))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <nav class="pager" aria-label="pages">
        {offset > 0 ? <a href={at(Math.max(0, offset - PAGE))}>← previous</a> : <span class="muted">← previous</span>}
        <span>
          {offset + 1}–{offset + answer.results.length} of {answer.total}
        </span>
        {offset + PAGE < answer.total ? <a href={at(offset + PAGE)}>next →</a> : <span class="muted">next →</span>}
      </nav>
    </>
  );
}
