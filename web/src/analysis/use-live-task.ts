/**
 * The live stream of a running task (GET /ui/api/tasks/:id/live, server-sent events): its processes and
 * calls as the machine reports them (`process`, `calls`, and `skipped` for calls counted but not sent),
 * its state changes, and `end` once it is reported.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { CallRow, ProcessRow } from './report';

/** Calls kept in the page; older ones are dropped (the report has them all). */
export const LIVE_CALLS_KEPT = 5000;
const FLUSH_MS = 200;

export interface LiveTask {
  processes: ProcessRow[];
  /** The latest calls, oldest first. */
  calls: CallRow[];
  /** Calls the server counted but did not send (a busy sample makes more than a page can show). */
  skipped: number;
  state: string | null;
  /** The stream could not be opened or was lost for good: the page watches the task instead. */
  failed: boolean;
}

export function useLiveTask(id: number, active: boolean, onEnd: () => void): LiveTask {
  const [live, setLive] = useState<LiveTask>({ processes: [], calls: [], skipped: 0, state: null, failed: false });
  const endRef = useRef(onEnd);
  endRef.current = onEnd;

  useEffect(() => {
    if (!active) return;
    const stream = new EventSource(`/ui/api/tasks/${id}/live`);
    let processes = new Map<number, ProcessRow>();
    let pending: CallRow[] = [];
    let timer: ReturnType<typeof setTimeout> | null = null;
    const flush = () => {
      timer = null;
      const arrived = pending;
      pending = [];
      setLive((previous) => ({ ...previous, processes: [...processes.values()], calls: [...previous.calls, ...arrived].slice(-LIVE_CALLS_KEPT) }));
    };
    const later = () => {
      timer ??= setTimeout(flush, FLUSH_MS);
    };
    stream.addEventListener('process', (event) => {
      const process = parse<ProcessRow>(event);
      if (process) processes = new Map(processes).set(process.pid, process);
      later();
    });
    stream.addEventListener('call', (event) => {
      const call = parse<CallRow>(event);
      if (call) pending.push(call);
      later();
    });
    stream.addEventListener('calls', (event) => {
      const calls = parse<CallRow[]>(event);
      if (Array.isArray(calls)) pending.push(...calls);
      later();
    });
    stream.addEventListener('skipped', (event) => {
      const skipped = parse<{ calls: number }>(event)?.calls;
      if (typeof skipped === 'number') setLive((previous) => ({ ...previous, skipped: previous.skipped + skipped }));
    });
    stream.addEventListener('state', (event) => {
      const state = parse<{ state: string }>(event)?.state;
      if (typeof state === 'string') setLive((previous) => ({ ...previous, state }));
    });
    stream.addEventListener('end', () => {
      // The server closes the stream after `end`; closing first keeps EventSource from reconnecting.
      stream.close();
      flush();
      endRef.current();
    });
    stream.onerror = () => {
      if (stream.readyState === EventSource.CLOSED) setLive((previous) => ({ ...previous, failed: true }));
    };
    return () => {
      stream.close();
      if (timer !== null) clearTimeout(timer);
    };
  }, [id, active]);
  return live;
}

function parse<T>(event: Event): T | null {
  try {
    return JSON.parse((event as MessageEvent<string>).data) as T;
  } catch {
    return null;
  }
}
