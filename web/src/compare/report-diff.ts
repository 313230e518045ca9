import type { ComparableReport } from './report-shape.js';
import { diffSets, type SetDiff } from './set-diff.js';

/** Two reports side by side: each section as what both show and what only one shows. Pure, for tests. */
export interface ReportDiff {
  score: { left: number | null; right: number | null };
  signatures: SetDiff<{ name: string; severity: number; description: string }>;
  processes: SetDiff<{ name: string; commandLine: string }>;
  dropped: SetDiff<{ path: string; sha256: string; size: number | null }>;
  written: SetDiff<string>;
  domains: SetDiff<string>;
  hosts: SetDiff<string>;
  http: SetDiff<string>;
}

export function compareReports(left: ComparableReport, right: ComparableReport): ReportDiff {
  return {
    score: { left: left.info?.score ?? null, right: right.info?.score ?? null },
    signatures: diffSets(signaturesOf(left), signaturesOf(right), (signature) => signature.name),
    processes: diffSets(processesOf(left), processesOf(right), processKey),
    dropped: diffSets(droppedOf(left), droppedOf(right), droppedKey),
    written: diffSets(writtenOf(left), writtenOf(right), (path) => path),
    domains: diffSets(domainsOf(left), domainsOf(right), (domain) => domain),
    hosts: diffSets(left.network?.hosts ?? [], right.network?.hosts ?? [], (host) => host),
    http: diffSets(httpOf(left), httpOf(right), (request) => request),
  };
}

function signaturesOf(report: ComparableReport) {
  return (report.signatures ?? []).map((signature) => ({
    name: signature.name,
    severity: signature.severity ?? 0,
    description: signature.description ?? '',
  }));
}

/**
 * Processes match by name and command line: pids differ from run to run. A sample's own path differs
 * too (each task gets its own target folder), so the command line is compared as written.
 */
function processesOf(report: ComparableReport) {
  return (report.behavior?.processes ?? []).map((process) => ({ name: process.process_name, commandLine: process.command_line ?? '' }));
}

const processKey = (process: { name: string; commandLine: string }) => `${process.name}\u0000${process.commandLine}`;

/** A dropped file is the same when its path in the machine and its content are. */
function droppedOf(report: ComparableReport) {
  return (report.dropped ?? []).map((file) => ({ path: file.filepath ?? file.name ?? '', sha256: file.sha256 ?? '', size: file.size ?? null }));
}

const droppedKey = (file: { path: string; sha256: string }) => `${file.path}\u0000${file.sha256}`;

/** Files the behaviour wrote or created, whether or not they were kept as dropped files. */
function writtenOf(report: ComparableReport): string[] {
  const summary = report.behavior?.summary ?? {};
  return [...(summary.file_written ?? []), ...(summary.file_created ?? [])];
}

function domainsOf(report: ComparableReport): string[] {
  return (report.network?.domains ?? []).map((entry) => entry.domain);
}

/** An HTTP request as `METHOD uri` (the full URL when the report has it). */
function httpOf(report: ComparableReport): string[] {
  return (report.network?.http ?? []).map((request) => {
    const where = request.uri || `${request.host ?? ''}${request.port && request.port !== 80 ? `:${request.port}` : ''}${request.path ?? ''}`;
    return `${request.method ?? 'GET'} ${where}`;
  });
}
