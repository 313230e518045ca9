import type { ComponentChildren } from 'preact';
import type { SetDiff } from './set-diff.js';

interface DiffSectionProps<T> {
  title: string;
  diff: SetDiff<T>;
  render: (item: T) => ComponentChildren;
  leftId: number;
  rightId: number;
}

/** One part of the comparison in three columns: only in the left task, in both, only in the right one. */
export function DiffSection<T>({ title, diff, render, leftId, rightId }: DiffSectionProps<T>) {
  const total = diff.same.length + diff.onlyLeft.length + diff.onlyRight.length;
  const column = (kind: string, heading: string, items: T[]) => (
    <div class={`diff-column diff-${kind}`} data-diff={kind}>
      <h3>
        {heading} <span class="muted">({items.length})</span>
      </h3>
      <ul>
        {items.map((item, index) => (
          <li key={index}>{render(item)}</li>
        ))}
      </ul>
    </div>
  );
  return (
    <section class="diff-section" data-section={title}>
      <h2>{title}</h2>
      {total === 0 ? (
        <p class="muted">Neither task has any.</p>
      ) : (
        <div class="diff-columns">
          {column('left', `Only #${leftId}`, diff.onlyLeft)}
          {column('same', 'Both', diff.same)}
          {column('right', `Only #${rightId}`, diff.onlyRight)}
        </div>
      )}
    </section>
  );
}
