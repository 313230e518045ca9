import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { CGROUP_PREFIX, detectCgroupLayout } from '../../src/machinery/linux/cgroups.js';
import { GUEST_INIT_PATH, GUEST_INIT_REAL_PATH } from '../../src/machinery/linux/guest-init.js';
import { guestRootPlan } from '../../src/machinery/linux/guest-root.js';
import { linuxSettingsSchema } from '../../src/machinery/linux/settings.js';
import { form, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Issue 10, "only the sample in the report": thirty tasks in a row on one server (so the tracer's
 * program is warm for all but the first), of every package, and no report's behaviour names nestbox's
 * launcher, the machine's init or a host path of nestbox's own. A benign script scores 0.
 */
const TASKS = 30;
const settings = linuxSettingsSchema.parse({});

interface Submission {
  name: string;
  content: string | Uint8Array;
  fields: Record<string, string>;
  /** The sample's first process runs this program. */
  firstProgram: string;
  benign?: boolean;
}

const BENIGN = (n: number) => `#!/bin/sh\necho "benign ${n}" > /tmp/benign.txt\n`;

function buildKinds(work: string): Array<(n: number) => Submission> {
  const elf = (n: number) => {
    const source = join(work, `p${n}.c`);
    writeFileSync(source, `#include <stdio.h>\n#include <unistd.h>\nint main(void) { FILE *f = fopen("out-${n}.txt", "w"); fputs("elf", f); fclose(f); if (fork() == 0) execl("/bin/true", "true", (char *)0); return 0; }\n`);
    execFileSync('gcc', ['-O1', '-o', join(work, `p${n}`), source]);
    return readFileSync(join(work, `p${n}`));
  };
  const archive = (n: number, type: 'zip' | '7z' | 'tar') => {
    const dir = join(work, `a${n}`);
    execFileSync('mkdir', ['-p', dir]);
    writeFileSync(join(dir, 'run.sh'), `#!/bin/sh\necho "archive ${n}" > /tmp/archive.txt\n`, { mode: 0o755 });
    const file = join(work, `a${n}.${type}`);
    execFileSync('7z', ['a', `-t${type}`, '-bd', file, join(dir, 'run.sh')], { stdio: 'ignore' });
    return readFileSync(file);
  };
  return [
    (n) => ({ name: `benign-${n}.sh`, content: BENIGN(n), fields: { package: 'generic' }, firstProgram: `/tmp/benign-${n}.sh`, benign: true }),
    (n) => ({ name: `prog-${n}`, content: elf(n), fields: {}, firstProgram: `/tmp/prog-${n}` }),
    (n) => ({
      name: `script-${n}.sh`,
      content: `#!/bin/bash\nmkdir -p /tmp/stage-${n}\n( echo child > /tmp/stage-${n}/child.txt )\nls /tmp > /dev/null\n`,
      fields: { package: 'bash' },
      firstProgram: '/bin/bash',
    }),
    (n) => ({
      name: `tool-${n}.py`,
      content: `import subprocess\nopen('/tmp/py-${n}.txt', 'w').write('python')\nsubprocess.run(['/bin/true'])\n`,
      fields: {},
      firstProgram: '/usr/bin/python3',
    }),
    (n) => ({ name: `tool-${n}.pl`, content: `open(my $f, '>', '/tmp/pl-${n}.txt'); print $f "perl"; system('/bin/true');\n`, fields: {}, firstProgram: '/usr/bin/perl' }),
    (n) => ({
      name: `tool-${n}.js`,
      content: `require('fs').writeFileSync('/tmp/js-${n}.txt', 'node'); require('child_process').execFileSync('/bin/true');\n`,
      fields: {},
      firstProgram: '/usr/bin/node',
    }),
    (n) => {
      const type = (['zip', '7z', 'tar'] as const)[n % 3]!;
      // The file inside is a shell script: the shell package runs it.
      return { name: `bundle-${n}.${type}`, content: archive(n, type), fields: { package: 'zip' }, firstProgram: '/bin/bash' };
    },
  ];
}

/** The host cgroups nestbox makes its machines' groups under, where they are below a hierarchy's root. */
function cgroupBases(): string[] {
  const layout = detectCgroupLayout();
  return [layout.v2Base, ...Object.values(layout.v1Base)].map((base) => base.replace(/\/$/, '')).filter((base) => base.split('/').length > 5);
}

interface TaskView {
  id: number;
  status: string;
  errors: string[];
}

async function analyse(server: TestServer, path: string, body: FormData): Promise<{ id: number; task: TaskView; report: any }> {
  const { status, body: created } = await server.json<{ task_id: number }>(path, { method: 'POST', body });
  assert.equal(status, 200, JSON.stringify(created));
  const id = created.task_id;
  const deadline = Date.now() + 120_000;
  for (;;) {
    const { body: view } = await server.json<{ task: TaskView }>(`/tasks/view/${id}`);
    if (['reported', 'failed_analysis', 'failed_processing', 'failed_reporting'].includes(view.task.status)) {
      const { body: report } = await server.json(`/tasks/report/${id}`);
      return { id, task: view.task, report };
    }
    if (Date.now() > deadline) throw new Error(`task ${id} still ${view.task.status}`);
    await sleep(200);
  }
}

describe('only the sample in the report, on the first task and the thirtieth', { timeout: 900_000 }, () => {
  let server: TestServer;
  let work: string;
  const results: Array<{ submission: Submission | { name: string; firstProgram: string; benign?: boolean }; id: number; task: TaskView; report: any }> = [];
  let seconds = 0;
  let browserSkipped = '';

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'nestbox-clean-report-'));
    // Archives reach the machine whole, so that its own unpack helper runs there too.
    server = await startTestServer({ machines: [{ name: 'linux1' }], archives: { max_depth: 0 } }, { engine: true, pollMs: 100 });
    const kinds = buildKinds(work);
    const submissions = Array.from({ length: TASKS - 1 }, (_, n) => kinds[n % kinds.length]!(n));
    const t0 = performance.now();
    for (const submission of submissions) {
      const body = form({ timeout: '20', ...submission.fields }, [['file', submission.name, submission.content]]);
      results.push({ submission, ...(await analyse(server, '/tasks/create/file', body)) });
    }
    // The browser is in the guest root unless the machine was set up without it.
    if (existsSync(join(guestRootPlan(settings).path, 'usr/bin/chromium'))) {
      // The browser never exits by itself: the task ends at its timeout. The fake internet serves the page.
      // /usr/bin/chromium is Debian's wrapper script, which executes the browser itself.
      const submission = { name: 'url', firstProgram: '/usr/lib/chromium/chromium' };
      results.push({ submission, ...(await analyse(server, '/tasks/create/url', form({ url: 'http://clean.example/', timeout: '6' }))) });
    } else {
      browserSkipped = 'chromium is not installed in the guest root (browser: false): no URL task';
      const submission = { name: 'benign-last.sh', content: BENIGN(TASKS), fields: { package: 'generic' }, firstProgram: '/tmp/benign-last.sh', benign: true };
      results.push({ submission, ...(await analyse(server, '/tasks/create/file', form({ timeout: '20', package: 'generic' }, [['file', submission.name, submission.content]]))) });
    }
    seconds = (performance.now() - t0) / 1000;
    console.log(`# ${TASKS} tasks in ${seconds.toFixed(1)} s${browserSkipped ? `; ${browserSkipped}` : ''}`);
  });
  after(async () => {
    await server?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('analyses every task and reports the behaviour of its sample', () => {
    assert.equal(results.length, TASKS);
    for (const { submission, id, task, report } of results) {
      assert.equal(task.status, 'reported', `task ${id} (${submission.name}): ${task.errors.join('; ')}`);
      const processes = report.behavior?.processes ?? [];
      assert.ok(processes.length > 0, `task ${id} (${submission.name}) has processes`);
      const first = processes[0];
      assert.equal(first.ppid, 0, `task ${id}: the sample's first process has no parent of nestbox's`);
      assert.equal(first.process_path, submission.firstProgram, `task ${id} (${submission.name}): first process`);
    }
  });

  it("names no launcher, no init and no host path of nestbox's in any behaviour or signature", () => {
    const forbidden = [
      'bwrap',
      'nsenter',
      'userns-exec',
      'nestbox-enter',
      GUEST_INIT_PATH,
      GUEST_INIT_REAL_PATH,
      '/run/nestbox',
      '/run/netns',
      // The machine's groups; a sample may look for its own cgroup files under /sys/fs/cgroup (node does).
      CGROUP_PREFIX,
      ...cgroupBases(),
      '/var/lib/nestbox',
      settings.guest_root_dir,
      settings.run_dir,
      server.home,
      server.ctx.layout.analyses,
      '/newroot',
      '/oldroot',
    ];
    for (const { submission, id, report } of results) {
      const shown = JSON.stringify({ behavior: report.behavior, signatures: report.signatures });
      for (const word of forbidden) {
        const at = shown.indexOf(word);
        assert.ok(at < 0, `task ${id} (${submission.name}) names ${word}: ${shown.slice(Math.max(0, at - 200), at + 200)}`);
      }
      for (const process of report.behavior.processes) {
        assert.notEqual(process.process_name, 'init', `task ${id}: the machine's init is no process of the sample`);
      }
    }
  });

  it('scores a benign two-line script 0 with package=generic, each time', () => {
    const benign = results.filter((result) => result.submission.benign);
    assert.ok(benign.length >= 4);
    for (const { id, report } of benign) {
      assert.deepEqual(
        report.signatures.map((signature: { name: string }) => signature.name),
        [],
        `task ${id}`,
      );
      assert.equal(report.info.score, 0, `task ${id}`);
    }
  });
});
