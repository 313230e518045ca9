/** Where the behaviour section gets processes and calls: the server, which filters and paginates them. */
import { type CallPage, type CallQuery, loadCalls, loadProcesses } from './analysis-api';
import type { ProcessRow } from './report';

export interface CallsSource {
  processes(signal?: AbortSignal): Promise<ProcessRow[]>;
  calls(query: CallQuery, signal?: AbortSignal): Promise<CallPage>;
}

export async function openCallsSource(id: number, signal?: AbortSignal): Promise<{ source: CallsSource; processes: ProcessRow[] }> {
  const source: CallsSource = { processes: (s) => loadProcesses(id, s), calls: (query, s) => loadCalls(id, query, s) };
  return { source, processes: await source.processes(signal) };
}
