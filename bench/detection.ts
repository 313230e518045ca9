import { analyseCorpus, type SampleOutcome } from '../test/helpers/corpus-run.js';
import { loadCorpus } from '../test/helpers/corpus.js';
import {
  BENIGN_SCORE,
  BENIGN_SEVERITY_LIMIT,
  evaluate,
  MALICIOUS_SCORE,
  RECALL_AIM,
  registeredSignatures,
  type Evaluation,
  type SignatureStats,
} from '../test/helpers/detection-evaluation.js';
import { startTestServer } from '../test/helpers/server.js';

/**
 * How often nestbox is right: the whole labelled corpus (test/corpus, built by scripts/build-corpus.sh)
 * submitted through the API of a real nestbox with the default configuration and MACHINES linux machines,
 * then judged against its labels. Prints per-signature precision and recall, overall recall, the score
 * distribution of each half, false positives by name, the samples missing required signatures, and the
 * aims of issue 11: every malicious sample scores >= 5, every benign control <= 1, recall >= 95%, and no
 * benign control fires a signature of severity >= 3. Label names the registry does not know are listed
 * as unknown, not counted. The figures are the measurement; missed aims do not fail it.
 *
 *   node dist/bench/detection.js [machines=2] [id-substring]
 */
const MACHINES = Number(process.argv[2] ?? 2);
const ONLY = process.argv[3];
const DEADLINE_MS = 60 * 60_000;

const percent = (value: number | null) => (value === null ? '   -  ' : `${(value * 100).toFixed(1).padStart(5)}%`);
const met = (ok: boolean) => (ok ? 'met' : 'MISSED');

const corpus = loadCorpus().filter((sample) => !ONLY || sample.id.includes(ONLY));
const registry = registeredSignatures();
const server = await startTestServer(
  { machines: Array.from({ length: MACHINES }, (_, index) => ({ name: `corpus${index + 1}` })) },
  { engine: true, pollMs: 200 },
);
const started = Date.now();
let outcomes: SampleOutcome[];
try {
  outcomes = await analyseCorpus(server, corpus, {
    deadlineMs: DEADLINE_MS,
    onOutcome: (o) => console.error(`  ${o.sample.id}: ${o.status}, score ${o.score}, ${o.seconds.toFixed(0)} s`),
  });
} finally {
  await server.close();
}
const wall = (Date.now() - started) / 1000;
const evaluation = evaluate(
  outcomes.map((o) => ({ id: o.sample.id, label: o.sample.label, reported: o.status === 'reported', score: o.score, signatures: o.signatures })),
  new Set(registry.keys()),
);
const severityOf = new Map(registry);
for (const o of outcomes) for (const { name, severity } of o.signatures) severityOf.set(name, severity);

const malicious = corpus.filter((sample) => sample.label.verdict === 'malicious').length;
console.log(`\ndetection corpus: ${malicious} malicious, ${corpus.length - malicious} benign; ${MACHINES} linux machines; ${wall.toFixed(0)} s`);
printSignatures(evaluation.signatures);
printScores(evaluation);
printFindings(evaluation, outcomes);
printAims(evaluation);

function printSignatures(stats: SignatureStats[]): void {
  console.log('\nper signature (TP: fired where its label requires; FP: fired on a benign control or where forbidden; FN: required, not fired)');
  console.log(`  ${'signature'.padEnd(34)} sev   TP  FP  FN  precision  recall  other fires on malicious`);
  for (const s of stats) {
    const row = [s.truePositives, s.falsePositives, s.falseNegatives].map((list) => String(list.length).padStart(3)).join(' ');
    console.log(`  ${s.name.padEnd(34)} ${String(severityOf.get(s.name) ?? '?').padStart(2)}  ${row}    ${percent(s.precision)}  ${percent(s.recall)}  ${s.unlabelled.length}`);
  }
}

function printScores(e: Evaluation): void {
  console.log('\nscore distribution');
  for (const [half, scores] of Object.entries(e.scores)) {
    const sorted = [...scores].sort((a, b) => a - b);
    const buckets = [
      ['0-1', (s: number) => s <= 1],
      ['1-5', (s: number) => s > 1 && s < 5],
      ['5-10', (s: number) => s >= 5],
    ] as const;
    const counts = buckets.map(([name, test]) => `${name}: ${sorted.filter(test).length}`).join(', ');
    const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
    console.log(`  ${half.padEnd(9)} n=${sorted.length}  min ${sorted[0] ?? 0}  median ${median}  max ${sorted.at(-1) ?? 0}  (${counts})`);
    console.log(`    ${sorted.join(' ')}`);
  }
  console.log(`  recall (malicious scoring >= ${MALICIOUS_SCORE}): ${percent(e.recall)}   benign scoring <= ${BENIGN_SCORE}: ${percent(e.benignClean)}`);
}

function printFindings(e: Evaluation, all: SampleOutcome[]): void {
  const fired = new Map(all.map((o) => [o.sample.id, o.signatures.map((s) => s.name)]));
  console.log('\nfalse positives by name (fired on benign controls)');
  if (e.benignFires.size === 0) console.log('  none');
  for (const [name, { severity, samples }] of [...e.benignFires].sort((a, b) => b[1].severity - a[1].severity)) {
    console.log(`  ${name} (severity ${severity}): ${samples.join(', ')}`);
  }
  const list = (title: string, rows: string[]) => {
    console.log(`\n${title}`);
    console.log(rows.length > 0 ? rows.map((row) => `  ${row}`).join('\n') : '  none');
  };
  list('samples missing required signatures', e.samples.filter((s) => s.missing.length > 0).map((s) => `${s.id}: ${s.missing.join(', ')} (fired: ${fired.get(s.id)?.join(', ') || 'nothing'})`));
  list('samples firing forbidden signatures', e.samples.filter((s) => s.unwanted.length > 0).map((s) => `${s.id}: ${s.unwanted.join(', ')}`));
  list(
    'scores on the wrong side',
    e.samples.filter((s) => !s.scoreOk).map((s) => `${s.id} (${s.verdict}) ${s.score}${s.scoreJudged ? '' : ' [needs unknown signatures]'}: ${fired.get(s.id)?.join(', ') || 'nothing fired'}`),
  );
  list('unknown signature (named by labels, not in the registry)', [...e.unknownSignatures].map(([name, ids]) => `${name}: ${ids.join(', ')}`));
  list('tasks without a report', all.filter((o) => o.status !== 'reported').map((o) => `${o.sample.id}: ${o.status} ${o.errors.join('; ')}`));
}

function printAims(e: Evaluation): void {
  console.log('\naims');
  console.log(`  every malicious sample scores >= ${MALICIOUS_SCORE}: ${met(e.aims.everyMaliciousAtLeast5)}`);
  console.log(`  every benign control scores <= ${BENIGN_SCORE}: ${met(e.aims.everyBenignAtMost1)}`);
  console.log(`  recall >= ${RECALL_AIM * 100}%: ${met(e.aims.recallAtLeast95)} (${percent(e.recall)})`);
  console.log(`  no benign control fires severity >= ${BENIGN_SEVERITY_LIMIT}: ${met(e.aims.noSevereOnBenign)}`);
}
