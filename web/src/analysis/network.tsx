/** What the sample did on the network, from the capture: DNS, HTTP, TLS, connections and the capture itself. */
import { downloads } from './analysis-api';
import { DownloadLink } from './download-link';
import { asText } from './format';
import { usePage } from './pager';
import type { NetworkSection } from './report';

type Row = Record<string, unknown>;
type Column = [heading: string, cell: (row: Row) => unknown];

export function Network({ id, network }: { id: number; network: NetworkSection | undefined }) {
  if (!network) return <p class="muted">No network analysis in this report.</p>;
  return (
    <section class="network">
      {network.pcap_sha256 ? <DownloadLink href={downloads.pcap(id)} label="Download the network capture (pcap)" /> : <p class="muted">No network capture.</p>}
      <Table
        title="DNS"
        class="dns"
        rows={network.dns}
        columns={[
          ['Name', (row) => row.request],
          ['Type', (row) => row.type],
          ['Answers', (row) => (Array.isArray(row.answers) ? row.answers.map((a: Row) => `${asText(a.type)} ${asText(a.data)}`).join(', ') : '')],
        ]}
      />
      <Table
        title="HTTP"
        class="http"
        rows={network.http}
        columns={[
          ['Method', (row) => row.method],
          ['URL', (row) => row.uri],
          ['User-Agent', (row) => row['user-agent']],
          ['Count', (row) => row.count],
        ]}
      />
      <Table
        title="TLS"
        class="tls"
        rows={network.tls}
        columns={[
          ['Server name', (row) => row.sni],
          ['Destination', (row) => `${asText(row.dst)}:${asText(row.dport)}`],
        ]}
      />
      <Table title="Hosts" class="hosts" rows={(network.hosts ?? []).map((host) => ({ host }))} columns={[['Address', (row) => row.host]]} />
      <Table title="Domains" class="domains" rows={network.domains} columns={[['Domain', (row) => row.domain], ['Address', (row) => row.ip]]} />
      <Table title="TCP" class="tcp" rows={network.tcp} columns={connectionColumns} />
      <Table title="UDP" class="udp" rows={network.udp} columns={connectionColumns} />
      <Table title="ICMP" class="icmp" rows={network.icmp} columns={[['Source', (row) => row.src], ['Destination', (row) => row.dst], ['Type', (row) => row.type]]} />
      <Table title="SMTP" class="smtp" rows={network.smtp} columns={[['Destination', (row) => row.dst], ['Message', (row) => row.raw]]} />
      <Table title="IRC" class="irc" rows={network.irc} columns={[['Destination', (row) => row.dst], ['Command', (row) => row.command], ['Parameters', (row) => row.params]]} />
    </section>
  );
}

const connectionColumns: Column[] = [
  ['Source', (row) => `${asText(row.src)}:${asText(row.sport)}`],
  ['Destination', (row) => `${asText(row.dst)}:${asText(row.dport)}`],
  ['Time', (row) => (typeof row.time === 'number' ? `+${row.time.toFixed(3)} s` : '')],
];

/** A titled table of one kind of traffic, a page at a time; nothing when there was none. */
function Table({ title, class: name, rows, columns }: { title: string; class: string; rows: readonly object[] | undefined; columns: Column[] }) {
  const page = usePage((rows ?? []) as Row[], 50);
  if (!rows || rows.length === 0) return null;
  return (
    <div class={`traffic ${name}`}>
      <h2>
        {title} ({rows.length})
      </h2>
      <table class="compact">
        <thead>
          <tr>
            {columns.map(([heading]) => (
              <th key={heading}>{heading}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {page.rows.map((row, index) => (
            <tr key={index}>
              {columns.map(([heading, cell]) => (
                <td key={heading} class="mono">
                  {asText(cell(row))}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      {page.pager}
    </div>
  );
}
