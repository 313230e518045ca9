import { useEffect, useState } from 'preact/hooks';

/** Page controls for a list of `total` rows shown `size` at a time. */
export function Pager({ offset, size, total, onOffset }: { offset: number; size: number; total: number; onOffset: (offset: number) => void }) {
  if (total <= size) return null;
  const last = Math.floor((total - 1) / size) * size;
  return (
    <div class="pager">
      <button type="button" disabled={offset === 0} onClick={() => onOffset(0)}>
        First
      </button>
      <button type="button" disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - size))}>
        Previous
      </button>
      <span class="muted">
        {offset + 1}–{Math.min(offset + size, total)} of {total}
      </span>
      <button type="button" class="next" disabled={offset >= last} onClick={() => onOffset(offset + size)}>
        Next
      </button>
      <button type="button" disabled={offset >= last} onClick={() => onOffset(last)}>
        Last
      </button>
    </div>
  );
}

/** One page of a list held in the page, with its pager; back to the first page when the list's length changes. */
export function usePage<T>(rows: readonly T[], size = 50): { rows: readonly T[]; pager: preact.JSX.Element } {
  const [offset, setOffset] = useState(0);
  useEffect(() => setOffset(0), [rows.length]);
  const start = offset < rows.length ? offset : 0;
  return {
    rows: rows.slice(start, start + size),
    pager: <Pager offset={start} size={size} total={rows.length} onOffset={setOffset} />,
  };
}
