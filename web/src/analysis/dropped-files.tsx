/** Files the sample wrote that the analysis kept, each downloadable as a password-protected zip. */
import { downloads } from './analysis-api';
import { DownloadLink } from './download-link';
import { asText, formatBytes } from './format';
import { usePage } from './pager';
import type { DroppedFile } from './report';

export function DroppedFiles({ id, dropped }: { id: number; dropped: DroppedFile[] | undefined }) {
  const { rows, pager } = usePage(dropped ?? [], 25);
  if (!dropped || dropped.length === 0) return <p class="muted">No dropped file.</p>;
  return (
    <section class="dropped">
      <h2>Dropped files ({dropped.length})</h2>
      {rows.map((file, index) => (
        <article key={index} class="dropped-file">
          <h3 class="mono">{asText(file.filepath ?? file.name)}</h3>
          <dl class="fields">
            <Row name="Type">{asText(file.type)}</Row>
            <Row name="Size">
              {formatBytes(file.size)}
              {file.truncated ? ` — first bytes of ${formatBytes(file.original_size)}` : ''}
            </Row>
            <Row name="MD5">{asText(file.md5)}</Row>
            <Row name="SHA256">{asText(file.sha256)}</Row>
            {file.pids?.length ? <Row name="Written by">{file.pids.map(asText).join(', ')}</Row> : null}
            {file.yara?.length ? <Row name="YARA">{file.yara.map((match) => asText(match.name)).join(', ')}</Row> : null}
            {file.note ? <Row name="Note">{asText(file.note)}</Row> : null}
          </dl>
          <DownloadLink href={downloads.dropped(id, file.sha256)} label="Download" />
        </article>
      ))}
      {pager}
    </section>
  );
}

function Row({ name, children }: { name: string; children: preact.ComponentChildren }) {
  return (
    <div>
      <dt>{name}</dt>
      <dd class="mono">{children}</dd>
    </div>
  );
}
