/** The memory dumps of the processes, with what was found in them, each downloadable as a password-protected zip. */
import { downloads } from './analysis-api';
import { DownloadLink } from './download-link';
import { asText } from './format';
import { usePage } from './pager';
import { useSection } from './use-section';
import { isRecord, ValueView } from './value-view';

export function MemoryDumps({ id }: { id: number }) {
  const section = useSection(id, 'procmemory');
  const dumps = section.state === 'done' ? (section.value ?? []).filter(isRecord) : [];
  const { rows, pager } = usePage(dumps, 20);
  if (section.state === 'loading') return <p class="muted">Loading memory dumps…</p>;
  if (section.state === 'failed') return <p class="error">{section.message}</p>;
  if (dumps.length === 0) return <p class="muted">No memory dump (submit with the memory option to take them).</p>;
  return (
    <section class="memory">
      {rows.map((dump, index) => (
        <article key={index} class="memory-dump">
          <h3>Process {asText(dump.pid)}</h3>
          <p class="muted">
            {Array.isArray(dump.regions) ? dump.regions.length : 0} regions · {Array.isArray(dump.strings) ? dump.strings.length : 0} strings
            {Array.isArray(dump.yara) && dump.yara.length > 0 ? ` · YARA: ${dump.yara.map((match: unknown) => asText(isRecord(match) ? match.name : match)).join(', ')}` : ''}
          </p>
          <DownloadLink href={downloads.memory(id, dump.pid)} label="Download the dump" />
          <details>
            <summary>URLs, regions and strings</summary>
            <h4>URLs</h4>
            <ValueView value={dump.urls ?? []} />
            <h4>Regions</h4>
            <ValueView value={dump.regions ?? []} />
            <h4>Strings</h4>
            <ValueView value={dump.strings ?? []} />
          </details>
        </article>
      ))}
      {pager}
    </section>
  );
}
