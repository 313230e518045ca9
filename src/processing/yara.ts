import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { internal } from '../errors.js';
import type { YaraMatch } from '../report/report-types.js';

const run = promisify(execFile);

/** Rules shipped with nestbox: `rules/yara/` at the top of the repository. */
export const SHIPPED_RULES_DIR = fileURLToPath(new URL('../../../rules/yara/', import.meta.url));

/** Most matched strings kept per rule and file; a rule matching a dump a million times says no more. */
const MAX_STRINGS_PER_MATCH = 100;
const SCAN_TIMEOUT_SECONDS = 120;

/**
 * YARA over files with the system `yara` CLI. The rules of every folder (shipped ones and the
 * operator's `<home>/yara/`) are compiled once, on first use, into a temporary file; a rule file that
 * does not compile is left out and reported in `problems` instead of disabling every rule.
 */
export class YaraScanner {
  readonly problems: string[] = [];
  private compiled: Promise<string | undefined> | undefined;
  private workDir: string | undefined;

  constructor(
    private readonly ruleDirs: readonly string[],
    private readonly tmpRoot: string,
  ) {}

  async scan(path: string): Promise<YaraMatch[]> {
    return (await this.scanMany([path])).get(path) ?? [];
  }

  /** Matches per file; files without a match map to []. */
  async scanMany(paths: readonly string[]): Promise<Map<string, YaraMatch[]>> {
    const results = new Map<string, YaraMatch[]>(paths.map((path) => [path, []]));
    const rules = await this.rules();
    if (rules === undefined || paths.length === 0) return results;
    const listable = paths.filter((path) => !/[\n\r]/.test(path));
    if (listable.length > 0) {
      const list = join(this.workDir!, `scan-${process.hrtime.bigint()}.txt`);
      await writeFile(list, listable.join('\n') + '\n');
      try {
        await this.runYara(['--scan-list', rules, list], results);
      } finally {
        await rm(list, { force: true });
      }
    }
    for (const path of paths.filter((p) => /[\n\r]/.test(p))) {
      this.problems.push(`yara cannot scan a path with a line break: ${JSON.stringify(path)}`);
    }
    return results;
  }

  async close(): Promise<void> {
    if (this.workDir) await rm(this.workDir, { recursive: true, force: true });
    this.workDir = undefined;
    this.compiled = undefined;
  }

  private rules(): Promise<string | undefined> {
    this.compiled ??= this.compile();
    return this.compiled;
  }

  private async compile(): Promise<string | undefined> {
    const sources = (await Promise.all(this.ruleDirs.map(ruleFiles))).flat();
    if (sources.length === 0) return undefined;
    this.workDir = await mkdtemp(join(this.tmpRoot, 'nestbox-yara-'));
    const output = join(this.workDir, 'rules.yarc');
    const failure = await yarac(sources, output);
    if (failure === undefined) return output;
    const good: string[] = [];
    for (const source of sources) {
      const problem = await yarac([source], join(this.workDir, 'probe.yarc'));
      if (problem === undefined) good.push(source);
      else this.problems.push(`yara rules ${source} do not compile: ${problem}`);
    }
    if (good.length === 0) return undefined;
    const again = await yarac(good, output);
    if (again !== undefined) {
      // Each file compiles alone but not together, e.g. two files defining one global rule name.
      this.problems.push(`yara rules do not compile together: ${again}`);
      return undefined;
    }
    return output;
  }

  private runYara(args: string[], results: Map<string, YaraMatch[]>): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn('yara', ['-C', '-s', '-m', '-w', '-a', String(SCAN_TIMEOUT_SECONDS), ...args], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      let current: YaraMatch | undefined;
      child.stderr.on('data', (data: Buffer) => {
        if (stderr.length < 4096) stderr += data.toString();
      });
      createInterface({ input: child.stdout }).on('line', (line) => {
        if (/^0x[0-9a-f]+:\$/.test(line)) {
          const data = line.slice(line.indexOf(': ') + 2);
          if (current && current.strings.length < MAX_STRINGS_PER_MATCH && !current.strings.includes(data)) current.strings.push(data);
          return;
        }
        const parsed = parseRuleLine(line);
        current = undefined;
        if (!parsed) return;
        const list = results.get(parsed.path);
        if (!list) return;
        current = { name: parsed.name, meta: parsed.meta, strings: [] };
        list.push(current);
      });
      child.on('error', (error) => reject(internal(`yara could not run: ${error.message}`, { cause: error })));
      child.on('close', (code) => {
        // Files yara could not open are reported on stderr; they simply have no matches.
        if (stderr.trim()) this.problems.push(`yara: ${stderr.trim().split('\n').slice(0, 5).join('; ')}`);
        if (code === 0 || code === 1) resolve();
        else reject(internal(`yara exited with ${code}: ${stderr.trim()}`, { context: { args } }));
      });
    });
  }
}

async function ruleFiles(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && /\.(yar|yara)$/i.test(entry.name))
    .map((entry) => join(entry.parentPath ?? dir, entry.name))
    .sort();
}

/** Compiles `sources` (each in its own namespace, so rule names may repeat across files); the error text or undefined. */
async function yarac(sources: readonly string[], output: string): Promise<string | undefined> {
  const args = ['-w', ...sources.map((source, index) => `ns${index}:${source}`), output];
  try {
    await run('yarac', args, { maxBuffer: 4 << 20 });
    return undefined;
  } catch (error) {
    const failure = error as { stderr?: string; message: string };
    return (failure.stderr || failure.message).trim().split('\n').slice(0, 5).join('; ');
  }
}

/** `NAME [key="value",n=5,b=true] PATH` as `yara -m` prints it. */
export function parseRuleLine(line: string): { name: string; meta: Record<string, string>; path: string } | undefined {
  const nameMatch = /^([A-Za-z_][A-Za-z0-9_]*) /.exec(line);
  if (!nameMatch) return undefined;
  let i = nameMatch[0].length;
  const meta: Record<string, string> = {};
  if (line[i] === '[') {
    i++;
    while (i < line.length && line[i] !== ']') {
      const eq = line.indexOf('=', i);
      if (eq < 0) return undefined;
      const key = line.slice(i, eq).trim();
      i = eq + 1;
      let value = '';
      if (line[i] === '"') {
        i++;
        while (i < line.length && line[i] !== '"') {
          if (line[i] === '\\' && i + 1 < line.length) {
            value += unescapeYara(line, i);
            i += line[i + 1] === 'x' ? 4 : 2;
          } else {
            value += line[i++];
          }
        }
        i++;
      } else {
        const end = line.slice(i).search(/[,\]]/);
        value = end < 0 ? line.slice(i) : line.slice(i, i + end);
        i = end < 0 ? line.length : i + end;
      }
      meta[key] = value;
      if (line[i] === ',') i++;
    }
    i += 2;
  }
  return { name: nameMatch[1]!, meta, path: line.slice(i) };
}

function unescapeYara(line: string, at: number): string {
  const next = line[at + 1]!;
  if (next === 'x') return String.fromCharCode(Number.parseInt(line.slice(at + 2, at + 4), 16));
  if (next === 'n') return '\n';
  if (next === 't') return '\t';
  return next;
}
