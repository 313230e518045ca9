/**
 * A task as the web interface's lists show it (GET /ui/api/tasks, the dashboard's recent tasks). No
 * imports: the front end (web/) reads this type too.
 */
export interface TaskListRow {
  id: number;
  category: string;
  /** The URL, or the name the file was submitted under (never a server path). */
  target: string;
  state: string;
  /** Null until the task is reported. */
  score: number | null;
  package: string;
  /** The machine it ran on, else the one asked for ('' for any). */
  machine: string;
  owner: string;
  tags: string[];
  added_on: string;
  completed_on: string | null;
}
