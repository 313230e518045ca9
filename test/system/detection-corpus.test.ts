import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { analyseCorpus, type SampleOutcome } from '../helpers/corpus-run.js';
import { loadCorpus } from '../helpers/corpus.js';
import { BENIGN_SCORE, evaluate, MALICIOUS_SCORE, registeredSignatures, type Evaluation } from '../helpers/detection-evaluation.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Issue 11 in CI: the corpus's fast subset (labels with `"fast": true`, both halves) submitted through the
 * API of a real nestbox with two linux machines, each report held to its label: the signatures it must and
 * must not fire, and its verdict's score (malicious >= 5, benign <= 1). A name the signature registry does
 * not have yet is left out (and said so); a malicious sample whose label needs such a name is not held to
 * its score either. The whole corpus runs in bench/detection.ts.
 */
const fast = loadCorpus().filter((sample) => sample.label.fast);

describe('detection corpus: the fast subset, end to end', { timeout: 360_000 }, () => {
  let server: TestServer;
  let outcomes: Map<string, SampleOutcome>;
  let evaluation: Evaluation;

  before(async () => {
    server = await startTestServer({ machines: [{ name: 'corpus1' }, { name: 'corpus2' }] }, { engine: true, pollMs: 200 });
    const list = await analyseCorpus(server, fast, { deadlineMs: 300_000 });
    outcomes = new Map(list.map((outcome) => [outcome.sample.id, outcome]));
    evaluation = evaluate(
      list.map((o) => ({ id: o.sample.id, label: o.sample.label, reported: o.status === 'reported', score: o.score, signatures: o.signatures })),
      new Set(registeredSignatures().keys()),
    );
  });
  after(async () => {
    await server?.close();
  });

  for (const sample of fast) {
    it(`${sample.id} (${sample.label.verdict}, ${sample.label.family})`, (t) => {
      const outcome = outcomes.get(sample.id)!;
      assert.equal(outcome.status, 'reported', `task ${outcome.taskId}: ${outcome.errors.join('; ')}`);
      const judged = evaluation.samples.find((entry) => entry.id === sample.id)!;
      const fired = outcome.signatures.map((signature) => signature.name).join(', ') || 'nothing';
      if (judged.unknown.length > 0) t.diagnostic(`unknown signature, not checked: ${judged.unknown.join(', ')}`);
      assert.deepEqual(judged.missing, [], `required signatures did not fire (fired: ${fired})`);
      assert.deepEqual(judged.unwanted, [], `forbidden signatures fired (fired: ${fired})`);
      const threshold = sample.label.verdict === 'malicious' ? `>= ${MALICIOUS_SCORE}` : `<= ${BENIGN_SCORE}`;
      if (!judged.scoreJudged) t.diagnostic(`score ${outcome.score} not held to ${threshold}: its label needs a signature not registered yet`);
      else assert.ok(judged.scoreOk, `score ${outcome.score}, wanted ${threshold} (fired: ${fired})`);
    });
  }
});
