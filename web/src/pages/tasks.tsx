/** Built by issue 12's front-end work. */
export function TasksPage() {
  return <h1>Tasks</h1>;
}
