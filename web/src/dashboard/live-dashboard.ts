import { useEffect, useState } from 'preact/hooks';
import { getJson } from '../api';
import type { NodeStatus } from '../../../src/api/node-status';
import type { TaskRow } from '../components/task-row';

export interface DiskSpace {
  total: number;
  free: number;
  used: number;
}

/** GET /ui/api/dashboard and each `event: dashboard` of its stream. */
export interface Dashboard {
  status: {
    hostname: string;
    version: string;
    nestbox_version?: string;
    cpu_count?: number;
    cpuload: number[];
    diskspace: Record<string, DiskSpace>;
    memory: number | null;
    memtotal: number | null;
    memavail: number | null;
    machines: { available: number; total: number };
    tasks: Record<string, number>;
    /** The cluster's nodes by name. */
    nodes: Record<string, NodeStatus>;
  };
  tasksByState: Record<string, number>;
  machines: Array<{ name: string; label: string; node: string; platform: string; locked: boolean; task: number | null; status: string | null }>;
  recent: TaskRow[];
}

export type Liveness = 'connecting' | 'live' | 'polling';

/** How often the dashboard is fetched again when its stream cannot be kept open. */
const POLL_MS = 5000;

/**
 * The dashboard, kept current by its server-sent event stream; when the stream fails for good, by
 * fetching it again every few seconds.
 */
export function useLiveDashboard(): { dashboard: Dashboard | null; error: string | null; liveness: Liveness } {
  const [dashboard, setDashboard] = useState<Dashboard | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [liveness, setLiveness] = useState<Liveness>('connecting');

  useEffect(() => {
    let timer: number | undefined;
    const poll = () => {
      getJson<Dashboard>('/ui/api/dashboard').then(
        (next) => {
          setDashboard(next);
          setError(null);
        },
        (e: Error) => setError(e.message),
      );
    };
    const stream = new EventSource('/ui/api/dashboard/stream');
    stream.addEventListener('open', () => setLiveness('live'));
    stream.addEventListener('dashboard', (event) => {
      setDashboard(JSON.parse((event as MessageEvent<string>).data) as Dashboard);
      setError(null);
      setLiveness('live');
    });
    stream.addEventListener('error', () => {
      // EventSource reconnects by itself unless the server refused the stream.
      if (stream.readyState !== EventSource.CLOSED || timer !== undefined) return;
      setLiveness('polling');
      poll();
      timer = window.setInterval(poll, POLL_MS);
    });
    return () => {
      stream.close();
      window.clearInterval(timer);
    };
  }, []);

  return { dashboard, error, liveness };
}
