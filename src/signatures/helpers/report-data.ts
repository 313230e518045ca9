import type { Report } from '../../report/report-types.js';
import { isIpLiteral } from './addresses.js';

/** Every domain name the sample looked up or contacted, from the network capture and the behaviour log. */
export function domainsOf(report: Report): string[] {
  const network = report.network;
  const names = [
    ...(network?.dns ?? []).map((query) => query.request),
    ...(network?.domains ?? []).map((entry) => entry.domain),
    ...(network?.http ?? []).map((request) => request.host.replace(/:\d+$/, '')),
    ...(network?.tls ?? []).map((hello) => hello.sni),
    ...(report.behavior?.summary.resolves_host ?? []),
    ...(report.behavior?.summary.connects_host ?? []),
  ];
  return unique(names.map((name) => name.toLowerCase().replace(/\.$/, '')).filter((name) => name !== '' && !isIpLiteral(name)));
}

export interface Flow {
  protocol: 'tcp' | 'udp';
  dst: string;
  dport: number;
  time: number;
}

/** The TCP and UDP flows of the capture. */
export function flowsOf(report: Report): Flow[] {
  const network = report.network;
  return [
    ...(network?.tcp ?? []).map((flow) => ({ protocol: 'tcp' as const, dst: flow.dst, dport: flow.dport, time: flow.time })),
    ...(network?.udp ?? []).map((flow) => ({ protocol: 'udp' as const, dst: flow.dst, dport: flow.dport, time: flow.time })),
  ];
}

/** Host paths of the sample and of the dropped files, with the name to show for each. */
export function storedFilesOf(report: Report, binaryPath: string): Array<{ path: string; label: string }> {
  const files: Array<{ path: string; label: string }> = [];
  if (report.target.category !== 'url') files.push({ path: report.target.file?.path ?? binaryPath, label: report.target.file?.name ?? 'sample' });
  for (const dropped of report.dropped ?? []) files.push({ path: dropped.path ?? '', label: dropped.filepath || dropped.name });
  return files.filter((file) => file.path !== '');
}

export function unique<T>(values: Iterable<T>): T[] {
  return [...new Set(values)];
}
