import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The labelled detection corpus (test/corpus/<malicious|benign>/<id>/): one source per sample and its
 * label. Compiled samples are built by scripts/build-corpus.sh (the setup step runs it); scripts are
 * submitted as they are.
 */
export type Verdict = 'malicious' | 'benign';

export interface CorpusLabel {
  verdict: Verdict;
  family: string;
  package?: string;
  options?: string;
  timeout?: number;
  /** Part of the CI test's quick subset. */
  fast?: boolean;
  must_fire: string[];
  must_not_fire: string[];
  /** The ATT&CK techniques the sample imitates. */
  attack: string[];
}

export interface CorpusSample {
  id: string;
  label: CorpusLabel;
  /** The file submitted: the script itself, or what the build made of a C source. */
  path: string;
  /** The name it is submitted under: the id with the source's kind as extension (none for an ELF). */
  fileName: string;
}

/** Source name -> the file submitted (relative to the sample's folder) and its extension on submission. */
const SOURCES: Record<string, { built: string; extension: string }> = {
  'sample.win.c': { built: 'sample.exe', extension: '.exe' },
  'sample.c': { built: 'sample', extension: '' },
  'sample.i386.c': { built: 'sample', extension: '' },
  'sample.sh': { built: 'sample.sh', extension: '.sh' },
  'sample.py': { built: 'sample.py', extension: '.py' },
  'sample.pl': { built: 'sample.pl', extension: '.pl' },
  'sample.js': { built: 'sample.js', extension: '.js' },
};

const VERDICTS: readonly Verdict[] = ['malicious', 'benign'];

/** test/corpus of this checkout, from the compiled test (dist/test/helpers) or the source alike. */
export function corpusRoot(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, '..', 'corpus'), join(here, '..', '..', '..', 'test', 'corpus')];
  const found = candidates.find((path) => existsSync(join(path, 'malicious')));
  if (!found) throw new Error(`test/corpus not found near ${here}`);
  return found;
}

/**
 * Every sample of the corpus, malicious first, each half in name order. Throws on a malformed sample, and
 * on a compiled sample not built yet unless `requireBuilt` is false (reading labels needs no build).
 */
export function loadCorpus(root = corpusRoot(), { requireBuilt = true } = {}): CorpusSample[] {
  const samples: CorpusSample[] = [];
  for (const verdict of VERDICTS) {
    const half = join(root, verdict);
    if (!existsSync(half)) continue;
    for (const id of readdirSync(half).sort()) samples.push(loadSample(join(half, id), id, verdict, requireBuilt));
  }
  return samples;
}

/** One sample by its path under the corpus, e.g. 'malicious/pe-injector': its built file and label. */
export function corpusSample(path: string, root = corpusRoot()): CorpusSample {
  const [verdict, id] = path.split('/') as [Verdict, string];
  return loadSample(join(root, verdict, id), id, verdict, true);
}

function loadSample(dir: string, id: string, verdict: Verdict, requireBuilt: boolean): CorpusSample {
  const sources = Object.keys(SOURCES).filter((name) => existsSync(join(dir, name)));
  if (sources.length !== 1) throw new Error(`${dir}: wants exactly one of ${Object.keys(SOURCES).join(', ')}, has ${sources.length}`);
  const source = SOURCES[sources[0]!]!;
  const path = join(dir, source.built);
  if (requireBuilt && !existsSync(path)) throw new Error(`${path} is not built: run scripts/build-corpus.sh (scripts/setup.sh --test runs it)`);
  const label = parseLabel(readFileSync(join(dir, 'label.json'), 'utf8'), `${dir}/label.json`);
  if (label.verdict !== verdict) throw new Error(`${dir}: label says ${label.verdict}, folder says ${verdict}`);
  return { id, label, path, fileName: `${id}${source.extension}` };
}

export function parseLabel(text: string, where: string): CorpusLabel {
  const raw = JSON.parse(text) as Record<string, unknown>;
  const fail = (what: string): never => {
    throw new Error(`${where}: ${what}`);
  };
  const names = (key: string): string[] => {
    const value = raw[key];
    if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) return fail(`${key} must be a list of names`);
    return value as string[];
  };
  const optional = <T>(key: string, type: 'string' | 'number' | 'boolean'): T | undefined => {
    if (raw[key] === undefined) return undefined;
    if (typeof raw[key] !== type) fail(`${key} must be a ${type}`);
    return raw[key] as T;
  };
  const known = new Set(['verdict', 'family', 'package', 'options', 'timeout', 'fast', 'must_fire', 'must_not_fire', 'attack']);
  for (const key of Object.keys(raw)) if (!known.has(key)) fail(`unknown key ${key}`);
  if (!VERDICTS.includes(raw.verdict as Verdict)) fail('verdict must be malicious or benign');
  if (typeof raw.family !== 'string' || raw.family === '') fail('family must be a name');
  const label: CorpusLabel = {
    verdict: raw.verdict as Verdict,
    family: raw.family as string,
    must_fire: names('must_fire'),
    must_not_fire: names('must_not_fire'),
    attack: names('attack'),
  };
  const pkg = optional<string>('package', 'string');
  const options = optional<string>('options', 'string');
  const timeout = optional<number>('timeout', 'number');
  const fast = optional<boolean>('fast', 'boolean');
  if (pkg !== undefined) label.package = pkg;
  if (options !== undefined) label.options = options;
  if (timeout !== undefined) label.timeout = timeout;
  if (fast !== undefined) label.fast = fast;
  const badTechnique = label.attack.find((id) => !/^T\d{4}(\.\d{3})?$/.test(id));
  if (badTechnique !== undefined) fail(`${badTechnique} is no ATT&CK technique id`);
  if (label.verdict === 'malicious' && label.attack.length === 0) fail('a malicious sample names the techniques it imitates');
  if (label.timeout !== undefined && (!Number.isInteger(label.timeout) || label.timeout <= 0)) fail('timeout must be a positive whole number of seconds');
  const both = label.must_fire.filter((name) => label.must_not_fire.includes(name));
  if (both.length > 0) fail(`${both.join(', ')} both must and must not fire`);
  return label;
}
