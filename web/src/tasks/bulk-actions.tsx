import { useState } from 'preact/hooks';
import { send } from '../api';
import { compareHref } from '../components/links';

export type BulkAction = 'delete' | 'reschedule' | 'rereport';

export interface BulkResult {
  id: number;
  ok: boolean;
  message?: string;
  newId?: number;
}

const LABELS: Record<BulkAction, string> = { delete: 'Delete', reschedule: 'Reschedule', rereport: 'Report again' };

/** POST /ui/api/tasks/bulk: the same operation on each selected task, each with its own result. */
export function runBulk(action: BulkAction, ids: number[]): Promise<{ results: BulkResult[] }> {
  return send('POST', '/ui/api/tasks/bulk', { action, ids });
}

interface BulkBarProps {
  selected: number[];
  onDone: (action: BulkAction, results: BulkResult[]) => void;
  onError: (message: string) => void;
}

/** Actions on the selected tasks; deleting asks once more, in the page (no dialog). */
export function BulkBar({ selected, onDone, onError }: BulkBarProps) {
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const run = async (action: BulkAction) => {
    setBusy(true);
    setConfirming(false);
    try {
      onDone(action, (await runBulk(action, selected)).results);
    } catch (error) {
      onError((error as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const none = selected.length === 0 || busy;
  return (
    <div class="bulk-bar">
      <span class="muted">{selected.length} selected</span>
      {confirming ? (
        <>
          <span>Delete {selected.length} task(s) and their results?</span>
          <button type="button" class="danger" onClick={() => run('delete')}>
            Yes, delete
          </button>
          <button type="button" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </>
      ) : (
        <>
          <button type="button" disabled={none} onClick={() => setConfirming(true)}>
            {LABELS.delete}
          </button>
          <button type="button" disabled={none} onClick={() => run('reschedule')}>
            {LABELS.reschedule}
          </button>
          <button type="button" disabled={none} onClick={() => run('rereport')}>
            {LABELS.rereport}
          </button>
          {selected.length === 2 && (
            <a class="button" href={compareHref(Math.min(...selected), Math.max(...selected))}>
              Compare the two
            </a>
          )}
        </>
      )}
    </div>
  );
}

/** One line for what a bulk action did: how many succeeded, and each failure's message. */
export function bulkSummary(action: BulkAction, results: BulkResult[]): string {
  const done = results.filter((result) => result.ok);
  const failed = results.filter((result) => !result.ok).map((result) => `#${result.id}: ${result.message ?? 'failed'}`);
  const made = done.filter((result) => result.newId !== undefined).map((result) => `#${result.newId}`);
  const head = `${LABELS[action]}: ${done.length} of ${results.length} done${made.length > 0 ? ` (new tasks ${made.join(', ')})` : ''}.`;
  return failed.length > 0 ? `${head} ${failed.join('; ')}` : head;
}
