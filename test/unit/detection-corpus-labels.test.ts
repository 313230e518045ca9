import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadCorpus, parseLabel } from '../helpers/corpus.js';
import { evaluate, registeredSignatures, type RunResult } from '../helpers/detection-evaluation.js';

describe('detection corpus labels', () => {
  const corpus = loadCorpus(undefined, { requireBuilt: false });
  const registry = registeredSignatures();

  it('has both halves, each sample with one source and a valid label', () => {
    const malicious = corpus.filter((sample) => sample.label.verdict === 'malicious');
    assert.ok(malicious.length >= 40, `${malicious.length} malicious samples`);
    assert.ok(corpus.length - malicious.length >= 15, `${corpus.length - malicious.length} benign controls`);
  });

  it('names only registered signatures', () => {
    const unknown = new Set(corpus.flatMap((sample) => [...sample.label.must_fire, ...sample.label.must_not_fire]).filter((name) => !registry.has(name)));
    assert.deepEqual([...unknown], [], 'a label names a signature that is not registered (a typo?)');
  });

  it('has a fast subset for CI that mixes both halves', () => {
    const fast = corpus.filter((sample) => sample.label.fast);
    assert.ok(fast.length >= 8 && fast.length <= 19, `${fast.length} fast samples`);
    assert.ok(fast.some((sample) => sample.label.verdict === 'benign') && fast.some((sample) => sample.label.verdict === 'malicious'));
  });

  it('refuses malformed labels with the reason', () => {
    const base = { verdict: 'malicious', family: 'x', must_fire: [], must_not_fire: [], attack: ['T1059.004'] };
    const refused = (label: object, reason: RegExp) => assert.throws(() => parseLabel(JSON.stringify(label), 'label.json'), reason);
    refused({ ...base, verdict: 'evil' }, /verdict/);
    refused({ ...base, must_fire: 'reverse_shell' }, /must_fire must be a list/);
    refused({ ...base, attack: ['T59'] }, /T59 is no ATT&CK/);
    refused({ ...base, attack: [] }, /names the techniques/);
    refused({ ...base, must_fire: ['a'], must_not_fire: ['a'] }, /a both must and must not fire/);
    refused({ ...base, colour: 'red' }, /unknown key colour/);
    refused({ ...base, timeout: 0 }, /timeout/);
    assert.equal(parseLabel(JSON.stringify({ ...base, fast: true, timeout: 20 }), 'label.json').timeout, 20);
  });
});

describe('detection evaluation', () => {
  const label = (verdict: 'malicious' | 'benign', must_fire: string[] = [], must_not_fire: string[] = []) => ({ verdict, family: 'f', must_fire, must_not_fire, attack: [] });
  const run = (id: string, l: RunResult['label'], score: number, fired: Array<[string, number]>): RunResult => ({
    id,
    label: l,
    reported: true,
    score,
    signatures: fired.map(([name, severity]) => ({ name, severity })),
  });
  const registry = new Set(['reverse_shell', 'daemonize', 'user_discovery', 'persistence_cron']);
  const results = [
    run('shell', label('malicious', ['reverse_shell'], ['persistence_cron']), 6.4, [['reverse_shell', 5]]),
    run('daemon', label('malicious', ['daemonize', 'not_written_yet']), 0.8, [['daemonize', 2]]),
    run('cron', label('malicious', ['persistence_cron']), 0.2, [['user_discovery', 1]]),
    run('admin', label('benign', [], ['reverse_shell']), 1.8, [['user_discovery', 1], ['persistence_cron', 3]]),
    run('quiet', label('benign'), 0, []),
  ];
  const evaluation = evaluate(results, registry);
  const sample = (id: string) => evaluation.samples.find((judged) => judged.id === id)!;
  const signature = (name: string) => evaluation.signatures.find((stats) => stats.name === name)!;

  it('counts per-signature true and false positives against the labels', () => {
    assert.deepEqual([signature('reverse_shell').precision, signature('reverse_shell').recall], [1, 1]);
    const cron = signature('persistence_cron');
    assert.deepEqual([cron.truePositives, cron.falsePositives, cron.falseNegatives], [[], ['admin'], ['cron']]);
    assert.deepEqual([cron.precision, cron.recall], [0, 0]);
    assert.deepEqual(signature('user_discovery').unlabelled, ['cron']);
  });

  it('sets unknown names aside and does not hold their samples to the score', () => {
    assert.deepEqual([...evaluation.unknownSignatures], [['not_written_yet', ['daemon']]]);
    assert.deepEqual([sample('daemon').missing, sample('daemon').scoreOk, sample('daemon').scoreJudged], [[], false, false]);
    assert.deepEqual([sample('cron').missing, sample('cron').scoreJudged], [['persistence_cron'], true]);
  });

  it('judges the aims', () => {
    assert.equal(evaluation.recall, 1 / 3);
    assert.equal(evaluation.benignClean, 1 / 2);
    assert.deepEqual(evaluation.benignFires.get('persistence_cron'), { severity: 3, samples: ['admin'] });
    assert.deepEqual(evaluation.aims, { everyMaliciousAtLeast5: false, everyBenignAtMost1: false, recallAtLeast95: false, noSevereOnBenign: false });
    const clean = evaluate([results[0]!, results[4]!], registry);
    assert.deepEqual(clean.aims, { everyMaliciousAtLeast5: true, everyBenignAtMost1: true, recallAtLeast95: true, noSevereOnBenign: true });
  });
});
