import type { NetworkSection } from '../report/report-types.js';
import { html, type SafeHtml } from './html-escape.js';
import { code, section, table } from './html-parts.js';

export function network(section_: NetworkSection | undefined): SafeHtml {
  const net = section_;
  if (!net) return section('network', 'Network', html`<p class="empty">No network capture.</p>`);
  const connections = [...(net.tcp ?? []).map((flow) => ({ ...flow, protocol: 'TCP' })), ...(net.udp ?? []).map((flow) => ({ ...flow, protocol: 'UDP' }))].sort(
    (a, b) => a.time - b.time,
  );
  const body = html`
<h3>Hosts</h3>${table(['Address'], (net.hosts ?? []).map((host) => [code(host)]))}
<h3>DNS</h3>${table(
    ['Request', 'Type', 'Answers'],
    (net.dns ?? []).map((query) => [code(query.request, 300), query.type, code(query.answers.map((answer) => `${answer.type} ${answer.data}`).join(', '), 1000)]),
  )}
<h3>HTTP</h3>${table(
    ['Method', 'Host', 'Port', 'URI', 'User agent'],
    (net.http ?? []).map((request) => [request.method, code(request.host, 300), request.port, code(request.uri, 1000), code(request['user-agent'], 300)]),
  )}
<h3>TLS</h3>${table(['Server name (SNI)', 'Address', 'Port'], (net.tls ?? []).map((hello) => [code(hello.sni, 300), code(hello.dst), hello.dport]))}
<h3>Connections</h3>${table(
    ['Time (s)', 'Protocol', 'Source', 'Destination'],
    connections.map((flow) => [flow.time.toFixed(3), flow.protocol, code(`${flow.src}:${flow.sport}`), code(`${flow.dst}:${flow.dport}`)]),
  )}
${optional('SMTP', ['Server', 'Session'], (net.smtp ?? []).map((mail) => [code(mail.dst), code(mail.raw, 2000)]))}
${optional('IRC', ['Server', 'Command', 'Parameters'], (net.irc ?? []).map((message) => [code(message.dst), message.command, code(message.params, 500)]))}
${optional('ICMP', ['Source', 'Destination', 'Type'], (net.icmp ?? []).map((packet) => [code(packet.src), code(packet.dst), packet.type]))}
${optional('Unreachable hosts', ['Address', 'Port'], (net.dead_hosts ?? []).map(([address, port]) => [code(address), port]))}`;
  return section('network', 'Network', body);
}

function optional(title: string, headers: string[], rows: Parameters<typeof table>[1]): SafeHtml {
  return rows.length === 0 ? html`` : html`<h3>${title}</h3>${table(headers, rows)}`;
}
