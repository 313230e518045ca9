export type { TaskListRow as TaskRow } from '../../../src/web/task-list-row';
