import type { ComponentChildren } from 'preact';
import { StateBadge, ScoreBadge } from './badges';
import { formatTime } from './format';
import { analysisHref } from './links';
import type { TaskRow } from './task-row';

interface TaskTableProps {
  tasks: TaskRow[];
  /** An extra first cell per row (the task list's checkboxes). */
  lead?: (task: TaskRow) => ComponentChildren;
  leadHeader?: ComponentChildren;
  /** Header cells that sort; the task list makes them links. */
  header?: (column: string, label: string) => ComponentChildren;
}

const COLUMNS: Array<[string, string]> = [
  ['id', 'ID'],
  ['target', 'Target'],
  ['state', 'State'],
  ['score', 'Score'],
  ['package', 'Package'],
  ['machine', 'Machine'],
  ['owner', 'Owner'],
  ['tags', 'Tags'],
  ['added_on', 'Added'],
  ['completed_on', 'Completed'],
];

/** Tasks as a table, each linking to its analysis. Targets come from samples: they are shown as text only. */
export function TaskTable({ tasks, lead, leadHeader, header }: TaskTableProps) {
  return (
    <table class="dense task-table">
      <thead>
        <tr>
          {lead && <th>{leadHeader}</th>}
          {COLUMNS.map(([column, label]) => (
            <th key={column}>{header ? header(column, label) : label}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {tasks.map((task) => (
          <tr key={task.id} data-task={task.id}>
            {lead && <td>{lead(task)}</td>}
            <td>
              <a href={analysisHref(task.id)}>{task.id}</a>
            </td>
            <td class="target">
              <span class="muted">{task.category}</span> <a class="mono" href={analysisHref(task.id)}>{task.target}</a>
            </td>
            <td>
              <StateBadge state={task.state} />
            </td>
            <td>
              <ScoreBadge score={task.score} />
            </td>
            <td>{task.package || <span class="muted">auto</span>}</td>
            <td>{task.machine || <span class="muted">any</span>}</td>
            <td>{task.owner}</td>
            <td>{task.tags.join(', ')}</td>
            <td class="nowrap">{formatTime(task.added_on)}</td>
            <td class="nowrap">{formatTime(task.completed_on)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
