/** Built by issue 12's front-end work. */
export function SubmitPage() {
  return <h1>Submit</h1>;
}
