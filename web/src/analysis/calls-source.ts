/**
 * Where the behaviour section gets processes and calls: the server's paginated endpoints, or, on a
 * server without them, the report's own calls, filtered and paginated in the page.
 */
import { type CallPage, type CallQuery, loadCalls, loadProcesses, loadSection } from './analysis-api';
import { callRowOf, type CallRow, processRowsOf, type ProcessRow, type Report } from './report';

export interface CallsSource {
  processes(signal?: AbortSignal): Promise<ProcessRow[]>;
  calls(query: CallQuery, signal?: AbortSignal): Promise<CallPage>;
}

/**
 * The report's calls, paginated in the page: the server's paginated endpoints (web-calls) are not on
 * main yet; serverSource is what the page switches to when they are.
 */
export async function openCallsSource(id: number, signal?: AbortSignal): Promise<{ source: CallsSource; processes: ProcessRow[] }> {
  const behavior = await loadSection(id, 'behavior', signal);
  const source = reportSource(behavior ?? undefined);
  return { source, processes: await source.processes() };
}

export function serverSource(id: number): CallsSource {
  return { processes: (signal) => loadProcesses(id, signal), calls: (query, signal) => loadCalls(id, query, signal) };
}

function reportSource(behavior: Report['behavior']): CallsSource {
  const all: CallRow[] = (behavior?.processes ?? []).flatMap((p) => (p.calls ?? []).map((call) => callRowOf(p.pid, call)));
  return {
    processes: () => Promise.resolve(processRowsOf({ behavior })),
    calls: (query) => {
      const matching = all.filter(matcher(query));
      return Promise.resolve({ calls: matching.slice(query.offset, query.offset + query.limit), total: matching.length });
    },
  };
}

function matcher(query: CallQuery): (call: CallRow) => boolean {
  const apis = query.api.split(',').map((name) => name.trim()).filter((name) => name !== '');
  const text = query.q.trim().toLowerCase();
  return (call) =>
    (query.pid === null || call.pid === query.pid) &&
    (apis.length === 0 || apis.includes(call.api)) &&
    (!query.category || call.category === query.category) &&
    (!text || JSON.stringify(call.arguments).toLowerCase().includes(text));
}
