/**
 * The task list's view as the URL's query holds it (so that a view can be shared): filters, sort
 * and page, the same names GET /ui/api/tasks takes.
 */
export const FILTERS = ['state', 'category', 'scoreMin', 'scoreMax', 'from', 'to', 'machine', 'package', 'owner', 'tag'] as const;
export type Filter = (typeof FILTERS)[number];

export const VIEW_KEYS = [...FILTERS, 'sort', 'order', 'page', 'pageSize'] as const;
export type TaskView = Partial<Record<(typeof VIEW_KEYS)[number], string>>;

export const SORTABLE = new Set(['id', 'added_on', 'completed_on', 'score']);

/** Only the view's own keys, non-empty, from whatever the URL says. */
export function viewOf(query: Record<string, string>): TaskView {
  const view: TaskView = {};
  for (const key of VIEW_KEYS) if (query[key]) view[key] = query[key];
  return view;
}

/** The view sorted by `column`: a second click on the same column reverses the order. */
export function sortedBy(view: TaskView, column: string): TaskView {
  const current = view.sort ?? 'added_on';
  const order = current === column ? (view.order === 'asc' ? 'desc' : 'asc') : 'desc';
  return { ...view, sort: column, order, page: undefined };
}

export function pageCount(total: number, pageSize: number): number {
  return Math.max(1, Math.ceil(total / pageSize));
}
