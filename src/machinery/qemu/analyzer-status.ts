import { setTimeout as sleep } from 'node:timers/promises';
import type { RunResult } from '../types.js';
import type { AgentClient } from './agent-client.js';

const STATUS_POLL_MS = 500;

export interface StatusFollowing {
  /** Epoch ms past which the guest is stopped by force. */
  deadline: number;
  signal: AbortSignal;
  warn(message: string): void;
  /** Told on each look whether the analyzer has reported its end (its last upload is then on its way). */
  onLook(finished: boolean): void;
}

/**
 * Polls the analysis status the analyzer in the guest reports through the agent (`POST /status` from
 * inside, `GET /status` from here): `complete` ends the run, `failed` (nestbox's analyzer) or `exception`
 * (Cuckoo's) ends it as an error. A guest that stops answering (hung, crashed, its agent killed) is
 * waited for until the deadline.
 */
export async function followAnalyzerStatus(agent: AgentClient, following: StatusFollowing): Promise<RunResult['ended']> {
  const { deadline, signal, warn } = following;
  while (Date.now() < deadline) {
    if (signal.aborted) {
      warn('the analysis was aborted');
      return 'error';
    }
    const state = await agent.status().catch(() => null);
    const failed = state?.status === 'failed' || state?.status === 'exception';
    following.onLook(state?.status === 'complete' || failed);
    if (state?.status === 'complete') return state.description === 'timeout' ? 'timeout' : 'exited';
    if (failed) {
      warn(`the analyzer failed: ${firstLines(state?.description) ?? 'no reason given'}`);
      return 'error';
    }
    await sleep(STATUS_POLL_MS, undefined, { signal }).catch(() => undefined);
  }
  warn('the guest did not finish the analysis in time: it was stopped by force');
  return 'timeout';
}

/** Cuckoo's analyzer reports a whole Python traceback: its last lines say what went wrong. */
function firstLines(description: string | null | undefined): string | null {
  if (!description) return null;
  const lines = description.trim().split(/\r?\n/);
  return lines.length > 3 ? lines.slice(-3).join(' / ') : lines.join(' / ');
}
