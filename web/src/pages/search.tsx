/** Built by issue 12's front-end work. */
export function SearchPage() {
  return <h1>Search</h1>;
}
