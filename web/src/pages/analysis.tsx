/** Built by issue 12's front-end work. */
export function AnalysisPage({ id }: { id?: string }) {
  return <h1>Analysis {id}</h1>;
}
