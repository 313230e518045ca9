import { useEffect, useState } from 'preact/hooks';
import { SelectField } from '../components/select-field';
import { FILTERS, type Filter, type TaskView } from './task-query';

const STATES = ['pending', 'running', 'completed', 'reported', 'failed_analysis', 'failed_processing', 'failed_reporting'];
const CATEGORIES = ['file', 'url', 'archive'];

/** The task list's filters; applying them puts them in the URL. */
export function FilterForm({ view, onApply }: { view: TaskView; onApply: (filters: TaskView) => void }) {
  const [draft, setDraft] = useState<TaskView>(view);
  useEffect(() => setDraft(view), [JSON.stringify(view)]);
  const field = (key: Filter) => ({
    name: key,
    value: draft[key] ?? '',
    onInput: (event: Event) => setDraft({ ...draft, [key]: (event.currentTarget as HTMLInputElement).value }),
  });
  const apply = (event: Event) => {
    event.preventDefault();
    onApply(draft);
  };
  const clear = () => {
    const none: TaskView = { ...draft };
    for (const key of FILTERS) delete none[key];
    onApply(none);
  };
  return (
    <form class="filters" onSubmit={apply}>
      <SelectField label="State" name="state" value={draft.state ?? ''} none="any" choices={STATES} onChange={(next) => setDraft({ ...draft, state: next })} />
      <SelectField label="Category" name="category" value={draft.category ?? ''} none="any" choices={CATEGORIES} onChange={(next) => setDraft({ ...draft, category: next })} />
      <label>
        Score from
        <input type="number" min={0} max={10} step={0.1} {...field('scoreMin')} />
      </label>
      <label>
        to
        <input type="number" min={0} max={10} step={0.1} {...field('scoreMax')} />
      </label>
      <label>
        Added from
        <input type="date" {...field('from')} />
      </label>
      <label>
        to
        <input type="date" {...field('to')} />
      </label>
      <label>
        Machine
        <input {...field('machine')} />
      </label>
      <label>
        Package
        <input {...field('package')} />
      </label>
      <label>
        Owner
        <input {...field('owner')} />
      </label>
      <label>
        Tag
        <input {...field('tag')} />
      </label>
      <div class="filter-actions">
        <button type="submit" class="primary">
          Filter
        </button>
        <button type="button" onClick={clear}>
          Clear
        </button>
      </div>
    </form>
  );
}
