/**
 * The parts of a report (GET /tasks/report/:id/json) that Compare reads. Every part is optional: an
 * older report, or one of a task that failed part-way, may lack any of them.
 */
export interface ComparableReport {
  info?: { id?: number; score?: number; package?: string; machine?: { name?: string } | null };
  target?: { category?: string; url?: string; filename?: string; file?: { name?: string; sha256?: string } };
  signatures?: Array<{ name: string; severity?: number; description?: string }>;
  behavior?: {
    processes?: Array<{ pid: number; ppid: number; process_name: string; command_line?: string }>;
    summary?: Record<string, string[] | undefined>;
  };
  dropped?: Array<{ name?: string; filepath?: string; sha256?: string; size?: number }>;
  network?: {
    domains?: Array<{ domain: string; ip?: string }>;
    hosts?: string[];
    http?: Array<{ method?: string; uri?: string; host?: string; port?: number; path?: string }>;
  };
}
