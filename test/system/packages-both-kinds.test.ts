import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { packageCatalogue } from '../../src/analysis/packages/index.js';
import { configSchema } from '../../src/config/schema.js';
import { createQemuMachinery } from '../../src/machinery/qemu/index.js';
import type { Machinery } from '../../src/machinery/types.js';
import { AnalysisPaths } from '../../src/storage/layout.js';
import { analysisRequest } from '../helpers/analysis-request.js';
import { COLLECT_GRACE_S } from '../helpers/qemu-timing.js';
import { closeTestMachineries, runInMachine, testMachinery } from '../linux-support.js';

/**
 * Every analysis package runs a sample the same way on both machine kinds: the linux machine follows the
 * catalogue on the host, the qemu guest's analyzer follows the copy it is sent with the task. Each
 * sample, asked for by its package name or alias, prints a line and leaves a file, and both must show
 * in the task's results: the line in the analysis log, the file among the dropped files.
 */
const log = pino({ level: process.env.NESTBOX_TEST_LOG ?? 'silent' });
const workDir = mkdtempSync(join(tmpdir(), 'nestbox-packages-test-'));
after(() => rmSync(workDir, { recursive: true, force: true }));

interface PackageCase {
  package: string;
  name: string;
  content: Buffer;
}

/** A script for the interpreter of `language` that prints "<tag> ran" and writes /tmp/<tag>-ran. */
function script(language: 'python' | 'perl' | 'bash' | 'node', tag: string): string {
  const marker = `/tmp/${tag}-ran`;
  switch (language) {
    case 'python':
      return `open("${marker}", "w").write("python")\nprint("${tag} ran")\n`;
    case 'perl':
      return `open(my $f, ">", "${marker}"); print $f "perl"; close($f);\nprint "${tag} ran\\n";\n`;
    case 'bash':
      return `echo bash > ${marker}\necho "${tag} ran"\n`;
    case 'node':
      return `require("fs").writeFileSync("${marker}", "node");\nconsole.log("${tag} ran");\n`;
  }
}

function archive(kind: '7z' | 'tar', tag: string, inner: string, content: string): Buffer {
  const dir = join(workDir, `archive-${tag}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'notes.txt'), 'not the sample\n');
  writeFileSync(join(dir, inner), content);
  const out = join(workDir, `${tag}.${kind === '7z' ? '7z' : 'tar.gz'}`);
  if (kind === '7z') execFileSync('7z', ['a', '-t7z', out, join(dir, 'notes.txt'), join(dir, inner)], { stdio: 'ignore' });
  else execFileSync('tar', ['-czf', out, '-C', dir, 'notes.txt', inner]);
  return readFileSync(out);
}

function elf(tag: string): Buffer {
  const source = join(workDir, `${tag}.c`);
  writeFileSync(source, `#include <stdio.h>\nint main(void) { FILE *f = fopen("/tmp/${tag}-ran", "w"); fputs("elf", f); fclose(f); puts("${tag} ran"); return 0; }\n`);
  // Static: the guest's libc need not match the host's.
  execFileSync('gcc', ['-static', '-O2', '-o', join(workDir, tag), source]);
  return readFileSync(join(workDir, tag));
}

function cases(): PackageCase[] {
  return [
    { package: 'elf', name: 'tool', content: elf('elf') },
    { package: 'python', name: 'run.txt', content: Buffer.from(script('python', 'python')) },
    { package: 'perl', name: 'run.txt', content: Buffer.from(script('perl', 'perl')) },
    { package: 'bash', name: 'run.txt', content: Buffer.from(script('bash', 'bash')) },
    { package: 'nodejs', name: 'run.txt', content: Buffer.from(script('node', 'nodejs')) },
    { package: 'js', name: 'run.txt', content: Buffer.from(script('node', 'js')) },
    { package: '7z', name: 'bundle.7z', content: archive('7z', '7z', 'main.js', script('node', '7z')) },
    { package: 'tar', name: 'bundle.tar.gz', content: archive('tar', 'tar', 'main.py', script('python', 'tar')) },
  ];
}

interface Seen {
  log: string;
  dropped: string[];
}

/**
 * Every package of the catalogue but url and reboot (tested by each kind's own tests) and wine (Windows
 * programs run on the linux machine only: wine-machine and e2e-wine-samples test it) has a case.
 */
function assertEveryPackageCovered(tested: PackageCase[]): void {
  const covered = new Set(tested.map((entry) => packageCatalogue().find((spec) => spec.name === entry.package || spec.aliases.includes(entry.package))!.name));
  const untested = packageCatalogue().filter((spec) => !covered.has(spec.name)).map((spec) => spec.name);
  assert.deepEqual(untested.sort(), ['reboot', 'url', 'wine']);
}

function assertRan(entry: PackageCase, seen: Seen): void {
  assert.match(seen.log, new RegExp(`${entry.package} ran`), seen.log);
  assert.ok(seen.dropped.includes(`/tmp/${entry.package}-ran`), `dropped: ${seen.dropped.join(', ')}\n${seen.log}`);
  assert.ok(!seen.dropped.some((path) => path.endsWith('notes.txt')), 'what an archive held is the sample, not a dropped file');
}

describe('analysis packages on the linux machine', () => {
  after(closeTestMachineries);
  let machinery: Machinery;
  before(async () => {
    machinery = testMachinery();
    await machinery.prepare();
  });

  it('run every package', async () => {
    const tested = cases();
    assertEveryPackageCovered(tested);
    for (const entry of tested) {
      const outcome = await runInMachine(machinery, { sample: { name: entry.name, content: entry.content }, package: entry.package });
      assert.equal(outcome.result.ended, 'exited', outcome.log);
      assertRan(entry, { log: outcome.log, dropped: outcome.files.map((file) => file.filepath ?? '') });
    }
  });
});

describe('analysis packages on the qemu machine (TCG)', { timeout: 30 * 60_000 }, () => {
  let machinery: Machinery;
  let nextTask = 9500;
  before(async () => {
    const settings = { memory_mb: 256, run_dir: '/run/nestbox/qemu-packages-test', collect_grace: COLLECT_GRACE_S, screenshots: false };
    machinery = createQemuMachinery(configSchema.parse({ machines: [{ name: 'q1', kind: 'qemu', settings }] }), log);
    await machinery.prepare();
  });
  after(async () => {
    await machinery?.close?.();
  });

  async function analyse(entry: PackageCase): Promise<Seen> {
    const taskId = nextTask++;
    const paths = new AnalysisPaths(join(workDir, `qemu-task-${taskId}`));
    paths.create();
    mkdirSync(join(workDir, `qemu-sample-${taskId}`));
    const samplePath = join(workDir, `qemu-sample-${taskId}`, entry.name);
    writeFileSync(samplePath, entry.content);
    const session = await machinery.start(analysisRequest('q1', { taskId, paths, samplePath, log, route: 'none', package: entry.package, timeoutSeconds: 60 }));
    try {
      const result = await session.run(new AbortController().signal);
      await session.stop();
      await session.collect();
      const text = readFileSync(paths.analysisLog, 'utf8');
      assert.equal(result.ended, 'exited', text);
      const dropped = readFileSync(paths.filesJson, 'utf8').split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { filepath: string | null }).filepath ?? '');
      return { log: text, dropped };
    } finally {
      await session.destroy();
    }
  }

  it('run every package', async () => {
    for (const entry of cases()) assertRan(entry, await analyse(entry));
  });
});
