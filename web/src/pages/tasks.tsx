import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { withQuery } from '../components/links';
import type { TaskRow } from '../components/task-row';
import { TaskTable } from '../components/task-table';
import { useJson } from '../components/use-json';
import { BulkBar, bulkSummary } from '../tasks/bulk-actions';
import { FilterForm } from '../tasks/filter-form';
import { pageCount, SORTABLE, sortedBy, type TaskView, viewOf } from '../tasks/task-query';
import './pages.css';

interface TaskPage {
  tasks: TaskRow[];
  total: number;
  page: number;
  pageSize: number;
}

/** Every task, filtered, sorted and paginated by the server, with actions on several at once. */
export function TasksPage() {
  const { query, route } = useLocation();
  const view = viewOf(query);
  const [actionError, setActionError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [selected, setSelected] = useState<Set<number>>(new Set());
  const [reloads, setReloads] = useState(0);
  const key = withQuery('/ui/api/tasks', view);
  const { data, error: loadError, latest } = useJson<TaskPage>(key, reloads);
  // A new sort, filter or page keeps the rows shown (dimmed) until its own come, rather than a flash of "Loading…".
  const shown = data ?? latest;
  const error = actionError ?? loadError;
  useEffect(() => setSelected(new Set()), [key]);

  const go = (next: TaskView) => route(withQuery('/ui/tasks', next));
  const toggle = (id: number) => {
    const next = new Set(selected);
    if (!next.delete(id)) next.add(id);
    setSelected(next);
  };
  const onPage = shown?.tasks ?? [];
  const allChosen = onPage.length > 0 && onPage.every((task) => selected.has(task.id));

  return (
    <>
      <h1>Tasks</h1>
      <FilterForm view={view} onApply={(filters) => go({ ...filters, page: undefined })} />
      <BulkBar
        selected={[...selected]}
        onDone={(action, results) => {
          setNotice(bulkSummary(action, results));
          setActionError(null);
          setSelected(new Set());
          setReloads((n) => n + 1);
        }}
        onError={setActionError}
      />
      {notice && <p class="notice">{notice}</p>}
      {error && <p class="error">{error}</p>}
      {!shown && !error && <p class="muted">Loading…</p>}
      {shown && (
        <div class="task-list" aria-busy={data ? 'false' : 'true'}>
          <TaskTable
            tasks={shown.tasks}
            leadHeader={<input type="checkbox" aria-label="select all on this page" checked={allChosen} onChange={() => setSelected(allChosen ? new Set() : new Set(onPage.map((task) => task.id)))} />}
            lead={(task) => <input type="checkbox" aria-label={`select task ${task.id}`} checked={selected.has(task.id)} onChange={() => toggle(task.id)} />}
            header={(column, label) => <SortHeader column={column} label={label} view={view} />}
          />
          {shown.tasks.length === 0 && <p class="muted">No task matches.</p>}
          <Pager page={shown.page} pages={pageCount(shown.total, shown.pageSize)} total={shown.total} view={view} />
        </div>
      )}
    </>
  );
}

function SortHeader({ column, label, view }: { column: string; label: string; view: TaskView }) {
  if (!SORTABLE.has(column)) return <>{label}</>;
  const active = (view.sort ?? 'added_on') === column;
  const arrow = active ? ((view.order ?? 'desc') === 'asc' ? ' ▲' : ' ▼') : '';
  return (
    <a href={withQuery('/ui/tasks', sortedBy(view, column))}>
      {label}
      {arrow}
    </a>
  );
}

function Pager({ page, pages, total, view }: { page: number; pages: number; total: number; view: TaskView }) {
  const at = (n: number) => withQuery('/ui/tasks', { ...view, page: n === 1 ? undefined : String(n) });
  return (
    <nav class="pager" aria-label="pages">
      {page > 1 ? <a href={at(page - 1)}>← previous</a> : <span class="muted">← previous</span>}
      <span>
        page {page} of {pages} · {total} task(s)
      </span>
      {page < pages ? <a href={at(page + 1)}>next →</a> : <span class="muted">next →</span>}
    </nav>
  );
}
