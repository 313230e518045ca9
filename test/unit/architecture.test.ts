import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

/**
 * The directions imports may take in src/, read from the real import graph (docs/architecture.md
 * explains them):
 *   - shared modules (errors, config, db, storage, util, report...) import no stage;
 *   - along the analysis chain machinery -> processing -> signatures -> reporting, no stage imports a
 *     later one: only the pipeline (src/pipeline/) drives them in turn;
 *   - no stage imports the entry points that wire the stages together (service, cli, pipeline);
 *   - machine kinds share code through machinery/host/, never through each other, and the host toolkit
 *     imports no kind.
 */
/** The clone's src/ (the tests run from dist/test/unit/). */
const SRC = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'src');

/** Modules every stage may use; they import no stage. */
const SHARED = ['errors', 'version', 'util', 'config', 'db', 'storage', 'report', 'formats', 'app'];
/** The analysis chain, in the order data flows through it. */
const CHAIN = [['machinery', 'analysis'], ['processing'], ['signatures'], ['reporting']];
/** Entry points and orchestrators: they wire stages together, and no stage imports them. */
const WIRING = ['service', 'cli', 'pipeline'];
/** Stages before the chain: they hand tasks to it through the database and the scheduler. */
const INTAKE = ['api', 'tasks', 'scheduler'];
/** Machine kinds: each may import machinery/ and machinery/host/, never another kind. */
const MACHINE_KINDS = ['linux', 'qemu'];

/**
 * Known exceptions, each with its reason; a test below fails when one is no longer needed.
 * Configuration checks machine settings against the kinds' descriptions when it loads (machinery/kinds.ts
 * imports each kind's settings schema and loads its machinery only when one is made).
 */
const ALLOWED: Array<[from: string, to: string]> = [['config/machine-settings.ts', 'machinery/kinds.ts']];

interface Edge {
  from: string;
  to: string;
}

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every relative import in src/, as paths relative to src/ (source files, .ts). */
function importGraph(): Edge[] {
  const edges: Edge[] = [];
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
      const target = normalize(join(dirname(file), match[1]!)).replace(/\.js$/, '.ts');
      edges.push({ from: relative(SRC, file), to: relative(SRC, target) });
    }
  }
  return edges;
}

/** The stage a file of src/ belongs to: its top folder (or file name), machine kinds apart. */
function stageOf(path: string): string {
  const parts = path.split(sep);
  if (parts.length === 1) return parts[0]!.replace(/\.ts$/, '');
  return parts[0]!;
}

function kindOf(path: string): string | undefined {
  const parts = path.split(sep);
  return parts[0] === 'machinery' && parts.length > 2 && MACHINE_KINDS.includes(parts[1]!) ? parts[1] : undefined;
}

/** Each cycle once, as the list of files around it (depth-first search over the graph). */
function findCycles(edges: Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const edge of edges) next.set(edge.from, [...(next.get(edge.from) ?? []), edge.to]);
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const target of next.get(file) ?? []) {
      if (state.get(target) === 'open') cycles.push([...stack.slice(stack.indexOf(target)), target]);
      else if (!state.has(target)) visit(target);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of next.keys()) if (!state.has(file)) visit(file);
  return cycles;
}

const chainIndex = (stage: string) => CHAIN.findIndex((group) => group.includes(stage));
const allowed = (edge: Edge) => ALLOWED.some(([from, to]) => edge.from === from && edge.to === to);
const show = (edges: Edge[]) => edges.map((edge) => `${edge.from} -> ${edge.to}`).join('\n');

describe('architecture: the directions imports take in src/', () => {
  const graph = importGraph();
  const crossing = graph.filter((edge) => stageOf(edge.from) !== stageOf(edge.to) && !allowed(edge));

  it('reads a real graph', () => {
    assert.ok(graph.length > 500, `only ${graph.length} imports found`);
    assert.ok(crossing.some((edge) => stageOf(edge.from) === 'api' && stageOf(edge.to) === 'db'));
  });

  it('shared modules import no stage', () => {
    const bad = crossing.filter((edge) => SHARED.includes(stageOf(edge.from)) && !SHARED.includes(stageOf(edge.to)));
    assert.equal(show(bad), '');
  });

  it('no stage of the analysis chain imports a later one', () => {
    const bad = crossing.filter((edge) => {
      const from = chainIndex(stageOf(edge.from));
      const to = chainIndex(stageOf(edge.to));
      return from >= 0 && to > from;
    });
    assert.equal(show(bad), '');
  });

  it('the chain and the shared modules import neither the intake nor the wiring', () => {
    const bad = crossing.filter((edge) => {
      const from = stageOf(edge.from);
      const to = stageOf(edge.to);
      const downstream = chainIndex(from) >= 0 || SHARED.includes(from);
      return downstream && (INTAKE.includes(to) || WIRING.includes(to));
    });
    assert.equal(show(bad), '');
  });

  it('no stage imports the wiring', () => {
    const bad = crossing.filter((edge) => WIRING.includes(stageOf(edge.to)) && !WIRING.includes(stageOf(edge.from)));
    assert.equal(show(bad), '');
  });

  it('the host toolkit imports no machine kind', () => {
    const bad = graph.filter((edge) => edge.from.startsWith(join('machinery', 'host') + sep) && kindOf(edge.to) !== undefined);
    assert.equal(show(bad), '');
  });

  it('machine kinds never import each other', () => {
    const bad = graph.filter((edge) => {
      const from = kindOf(edge.from);
      const to = kindOf(edge.to);
      return from !== undefined && to !== undefined && from !== to;
    });
    assert.equal(show(bad), '');
  });

  it('route modules share helpers through api/, never through each other', () => {
    const routes = join('api', 'routes') + sep;
    const shared = [join(routes, 'registrar.ts')];
    const bad = graph.filter(
      (edge) => edge.from.startsWith(routes) && !edge.from.endsWith(`${sep}index.ts`) && edge.to.startsWith(routes) && !shared.includes(edge.to),
    );
    assert.equal(show(bad), '');
  });

  it('has no import cycle, type-only imports included', () => {
    assert.deepEqual(findCycles(graph), []);
  });

  it('keeps no exception that is no longer needed', () => {
    const unused = ALLOWED.filter(([from, to]) => !graph.some((edge) => edge.from === from && edge.to === to));
    assert.deepEqual(unused, []);
  });
});
