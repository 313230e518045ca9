import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SHIPPED_RULES_DIR, YaraScanner } from '../src/processing/yara.js';

/**
 * What the static capability rules cost the YARA scan of processing: the host's programs (/usr/bin) scanned
 * with every shipped rule, beside the baseline of the rule files that have no static capability rules
 * (linux.yar and packers.yar), in the same run and in alternating rounds.
 *
 *   node dist/bench/static-rules.js [rounds]
 */

const BASELINE_FILES = ['linux.yar', 'packers.yar'];

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 3);
  const work = mkdtempSync(join(tmpdir(), 'nestbox-bench-static-'));
  try {
    const baselineDir = join(work, 'baseline');
    mkdirSync(baselineDir);
    for (const file of BASELINE_FILES) copyFileSync(join(SHIPPED_RULES_DIR, file), join(baselineDir, file));
    const files = readdirSync('/usr/bin', { withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => join('/usr/bin', entry.name));
    const bytes = files.reduce((sum, file) => sum + statSync(file).size, 0);
    const scanners = { baseline: new YaraScanner([baselineDir], work), shipped: new YaraScanner([SHIPPED_RULES_DIR], work) };
    const times: Record<keyof typeof scanners, number[]> = { baseline: [], shipped: [] };
    let matched = 0;
    for (const scanner of Object.values(scanners)) await scanner.scan(files[0]!); // compile outside the timing
    for (let round = 0; round < rounds; round++) {
      for (const name of Object.keys(scanners) as Array<keyof typeof scanners>) {
        const start = process.hrtime.bigint();
        const results = await scanners[name].scanMany(files);
        times[name].push(Number(process.hrtime.bigint() - start) / 1e6);
        if (name === 'shipped') matched = [...results.values()].filter((matches) => matches.some((match) => match.meta.signature)).length;
      }
    }
    for (const scanner of Object.values(scanners)) await scanner.close();
    console.log(`${files.length} files of /usr/bin, ${(bytes / 2 ** 20).toFixed(0)} MiB, ${rounds} rounds (median)`);
    console.log('rules                 time      per file   MiB/s');
    for (const name of Object.keys(times) as Array<keyof typeof times>) {
      const ms = median(times[name]);
      console.log(`${name.padEnd(16)} ${`${(ms / 1000).toFixed(2)} s`.padStart(9)} ${`${(ms / files.length).toFixed(2)} ms`.padStart(10)} ${((bytes / 2 ** 20) / (ms / 1000)).toFixed(0).padStart(7)}`);
    }
    console.log(`files matched by a rule that feeds a signature: ${matched}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

await main();
