import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { answerProblems, storeCounts, type StoreCounts } from '../helpers/fuzz/invariants.js';
import { droppedUploads, type FuzzCase, malformedCreateRequests, oddPathRequests } from '../helpers/fuzz/requests.js';
import { sendRaw } from '../helpers/raw-http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Property-based fuzzing of the real API on loopback with a real SQLite file: hostile requests get a
 * JSON 4xx that names no host path, never a 5xx or silence, and leave storage as it was. Run counts are
 * fixed so CI stays short; a failure prints fast-check's seed, and FUZZ_SEED=<seed> replays it.
 * bench/api-fuzz.ts runs the same generators much longer.
 */
function runs(numRuns: number): fc.Parameters<unknown> {
  const seed = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
  // No shrinking: every shrink step is a real request, and the failing case's label says enough.
  return { numRuns, seed, endOnFailure: true, includeErrorInReport: true };
}

describe('fuzzed requests against the real API', () => {
  let server: TestServer;
  let port: number;
  let hostPaths: string[];
  let baseline: StoreCounts;
  before(async () => {
    server = await startTestServer({ api: { upload_limit: 64 * 1024, request_limit: 256 * 1024 } });
    port = Number(new URL(server.url).port);
    hostPaths = [server.home, process.cwd()];
    baseline = await counts();
  });
  after(() => server.close());

  const counts = () =>
    storeCounts(
      async (table) => Number((await server.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n),
      [server.ctx.layout.root, server.ctx.layout.tmp],
    );

  /** Sends one case and checks its answer, the storage and that the service still answers. */
  async function check(fuzzCase: FuzzCase): Promise<void> {
    const answer = await sendRaw(port, fuzzCase.bytes, { head: fuzzCase.head });
    assert.deepEqual(answerProblems(answer, hostPaths, fuzzCase.head), [], fuzzCase.label);
    const now = await counts();
    if (answer.status >= 400) assert.deepEqual(now, baseline, `${fuzzCase.label}: refused with ${answer.status}, but storage changed`);
    // Successes (a form the mutations left valid) may store things; later refusals are measured from here.
    baseline = now;
    await assertServing();
  }

  async function assertServing(): Promise<void> {
    const response = await server.fetch('/machines/list');
    assert.equal(response.status, 200);
    await response.arrayBuffer();
  }

  it('answers malformed multipart create requests with a JSON 4xx and stores nothing', async () => {
    await fc.assert(fc.asyncProperty(malformedCreateRequests, check), runs(150));
  });

  it('answers odd methods, paths and headers with a JSON 4xx or a success, never a 5xx', async () => {
    await fc.assert(fc.asyncProperty(oddPathRequests, check), runs(100));
  });

  it('leaves nothing behind when the client goes away mid-upload', async () => {
    await fc.assert(
      fc.asyncProperty(droppedUploads, async (fuzzCase) => {
        await sendRaw(port, fuzzCase.bytes, { dropAfter: fuzzCase.dropAfter });
        // The server notices the reset a moment later and cleans up after it.
        assert.deepEqual(await settledCounts(), baseline, fuzzCase.label);
        await assertServing();
      }),
      runs(25),
    );
  });

  /** Storage once it matches the baseline, or as it is after a second. */
  async function settledCounts(): Promise<StoreCounts> {
    for (let waited = 0; waited < 1000; waited += 20) {
      const now = await counts();
      if (JSON.stringify(now) === JSON.stringify(baseline)) return now;
      await sleep(20);
    }
    return counts();
  }
});
