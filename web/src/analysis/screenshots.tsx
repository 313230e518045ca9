/** The machine's screen during the analysis, as a gallery of thumbnails opening the full picture. */
import { screenshotUrl } from './analysis-api';
import { usePage } from './pager';
import { useSection } from './use-section';

export function Screenshots({ id }: { id: number }) {
  const section = useSection(id, 'screenshots');
  const urls = section.state === 'done' ? (section.value ?? []).map((shot) => screenshotUrl(id, shot?.path)).filter((url) => url !== null) : [];
  const { rows, pager } = usePage(urls, 24);
  if (section.state === 'loading') return <p class="muted">Loading screenshots…</p>;
  if (section.state === 'failed') return <p class="error">{section.message}</p>;
  if (urls.length === 0) return <p class="muted">No screenshot.</p>;
  return (
    <section class="screenshots">
      <div class="gallery">
        {rows.map((url) => (
          <a key={url} href={url} target="_blank" rel="noopener noreferrer">
            <img src={url} alt={`screenshot ${url.split('/').pop()}`} loading="lazy" />
          </a>
        ))}
      </div>
      {pager}
    </section>
  );
}
