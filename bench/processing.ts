import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { createContext } from '../src/app.js';
import { validateConfig } from '../src/config/load.js';
import { processTask } from '../src/pipeline/process-task.js';
import { prepareTask } from './helpers/synthetic-task.js';

/**
 * Processing time and peak memory of the whole pipeline (every module, report.json written) for a
 * small task and for one whose behaviour log holds a million events. Each case runs in a fresh process
 * so its peak RSS is its own.
 *
 *   node dist/bench/processing.js
 */

const SCENARIOS = { small: 2_000, million: 1_000_000 } as const;
type Scenario = keyof typeof SCENARIOS;

async function main(): Promise<void> {
  const scenario = process.argv[2] as Scenario | undefined;
  if (scenario && scenario in SCENARIOS) {
    console.log(JSON.stringify(await measure(scenario)));
    return;
  }
  console.log('scenario   events     time      peak RSS   RSS growth   report.json');
  for (const name of Object.keys(SCENARIOS) as Scenario[]) {
    const { stdout } = await promisify(execFile)(process.execPath, [fileURLToPath(import.meta.url), name], { maxBuffer: 1 << 20 });
    const result = JSON.parse(stdout) as Awaited<ReturnType<typeof measure>>;
    console.log(
      `${name.padEnd(10)} ${String(SCENARIOS[name]).padStart(7)} ${`${(result.ms / 1000).toFixed(2)} s`.padStart(9)} ${`${result.peakMiB} MiB`.padStart(10)} ${`${result.growthMiB} MiB`.padStart(11)} ${`${result.reportMiB} MiB`.padStart(12)}`,
    );
  }
}

async function measure(scenario: Scenario) {
  const home = mkdtempSync(join(tmpdir(), 'nestbox-bench-processing-'));
  const config = validateConfig({ paths: { storage: join(home, 'storage'), tmppath: join(home, 'tmp') }, logging: { level: 'silent' } });
  const ctx = await createContext({ config, home, log: pino({ level: 'silent' }) });
  try {
    const { id, paths } = await prepareTask(ctx, SCENARIOS[scenario]);
    global.gc?.();
    const before = process.resourceUsage().maxRSS;
    const started = performance.now();
    await processTask(ctx, id);
    const ms = performance.now() - started;
    const status = (await ctx.stores.tasks.get(id))!.status;
    if (status !== 'reported') throw new Error(`task ended ${status}`);
    const { size } = await import('node:fs/promises').then((fs) => fs.stat(paths.reportJson));
    const peak = process.resourceUsage().maxRSS;
    return { ms: Math.round(ms), peakMiB: Math.round(peak / 1024), growthMiB: Math.round((peak - before) / 1024), reportMiB: Math.round(size / 1048576) };
  } finally {
    await ctx.close();
    rmSync(home, { recursive: true, force: true });
  }
}

await main();
