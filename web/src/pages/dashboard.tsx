/** Built by issue 12's front-end work. */
export function DashboardPage() {
  return <h1>Dashboard</h1>;
}
