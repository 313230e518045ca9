/** Built by issue 12's front-end work. */
export function ComparePage() {
  return <h1>Compare</h1>;
}
