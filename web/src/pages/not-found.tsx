export function NotFoundPage() {
  return (
    <>
      <h1>Not found</h1>
      <p>
        There is no such page. <a href="/ui/">Back to the dashboard</a>.
      </p>
    </>
  );
}
