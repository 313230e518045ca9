/** The printable strings of the sample, filterable, a page at a time. */
import { useMemo, useState } from 'preact/hooks';
import { asText } from './format';
import { usePage } from './pager';

export function StringsList({ strings }: { strings: unknown[] | undefined }) {
  const [filter, setFilter] = useState('');
  const shown = useMemo(() => {
    const all = (strings ?? []).map(asText);
    const wanted = filter.toLowerCase();
    return wanted ? all.filter((text) => text.toLowerCase().includes(wanted)) : all;
  }, [strings, filter]);
  const { rows, pager } = usePage(shown, 100);
  if (!strings || strings.length === 0) return <p class="muted">No strings in this report.</p>;
  return (
    <section class="strings">
      <label>
        Contains <input name="strings-filter" value={filter} onInput={(event) => setFilter(event.currentTarget.value)} />
      </label>
      <p class="muted">
        {shown.length} of {strings.length} strings
      </p>
      <ol class="strings-list mono">
        {rows.map((text, index) => (
          <li key={index}>{text}</li>
        ))}
      </ol>
      {pager}
    </section>
  );
}
