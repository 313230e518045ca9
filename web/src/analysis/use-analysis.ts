/**
 * The task of the page and, once it is reported, its report summary. While the task runs the page
 * reloads both when the live stream ends, or, without a stream, when polling sees the task finish.
 */
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError } from '../api';
import { loadSummary, loadTask } from './analysis-api';
import type { Report, TaskView } from './report';

export type Analysis =
  | { state: 'loading' }
  | { state: 'missing'; message: string }
  | { state: 'failed'; message: string }
  | { state: 'ready'; task: TaskView; report: Report | null };

const POLL_MS = 2000;

export function useAnalysis(id: number): { analysis: Analysis; reload: () => void } {
  const [analysis, setAnalysis] = useState<Analysis>({ state: 'loading' });
  const [generation, setGeneration] = useState(0);
  const reload = useCallback(() => setGeneration((n) => n + 1), []);

  useEffect(() => {
    const abort = new AbortController();
    load(id, abort.signal).then(
      (next) => abort.signal.aborted || setAnalysis(next),
      (error: Error) => abort.signal.aborted || setAnalysis(error instanceof ApiError && error.status === 404 ? { state: 'missing', message: error.message } : { state: 'failed', message: error.message }),
    );
    return () => abort.abort();
  }, [id, generation]);
  return { analysis, reload };
}

/** Reloads the analysis every few seconds while `active` (the live stream is not available). */
export function usePolling(active: boolean, reload: () => void): void {
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(reload, POLL_MS);
    return () => clearInterval(timer);
  }, [active, reload]);
}

async function load(id: number, signal: AbortSignal): Promise<Analysis> {
  const task = await loadTask(id, signal);
  if (task.status !== 'reported') return { state: 'ready', task, report: null };
  return { state: 'ready', task, report: await loadSummary(id, signal) };
}
