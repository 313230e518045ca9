/** A task as the interface's lists show it (GET /ui/api/tasks, the dashboard's recent tasks). */
export interface TaskRow {
  id: number;
  category: string;
  /** The URL, or the name the file was submitted under. */
  target: string;
  state: string;
  score: number | null;
  package: string;
  machine: string;
  owner: string;
  tags: string[];
  added_on: string;
  completed_on: string | null;
}
