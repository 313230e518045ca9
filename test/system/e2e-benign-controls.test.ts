import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { form, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Issue 11, "detection you can trust": ordinary programs run as samples on the Linux machine, against the
 * task network's fake internet, score at most 1 and fire no signature of severity 3 or more. Each is what a
 * user submits to check something harmless: an admin script, a Python HTTP download, a Node program
 * fetching JSON, a tar backup, an installer writing under /opt, a curl download, a script that sleeps past the analysis, and the
 * two-line script that guards against signatures firing on nestbox's own launch.
 */

interface ReportView {
  info: { score: number };
  signatures: Array<{ name: string; severity: number; marks: unknown[] }>;
  behavior: { summary: Record<string, string[]> };
  debug: { log: string[] };
}

/** `package` is generic unless given; null lets nestbox pick it by the file's type. */
const CONTROLS: Array<{ title: string; name: string; content: string; package?: string | null; shows: (report: ReportView) => boolean }> = [
  {
    title: 'the two-line script (package=generic)',
    name: 'two-lines.sh',
    content: '#!/bin/sh\necho "hello" > /tmp/hello.txt\n',
    // No signature at all: none may fire on nestbox's own launch (init, launcher, helpers).
    shows: (report) => written(report, '/tmp/hello.txt') && report.signatures.length === 0,
  },
  {
    title: 'an admin script checking the machine and writing a status file',
    name: 'admin.sh',
    content: [
      '#!/bin/sh',
      'uname -a; id; hostname; df -h /; uptime',
      'ps aux > /tmp/processes.txt',
      'ls -la /etc > /dev/null; cat /etc/os-release > /dev/null',
      'mkdir -p /tmp/status && date > /tmp/status/last-check.txt',
      'sleep 1',
      'echo ok >> /tmp/status/last-check.txt',
      '',
    ].join('\n'),
    shows: (report) => written(report, '/tmp/status/last-check.txt'),
  },
  {
    title: 'a Python program fetching a page over HTTP and saving it',
    name: 'fetch.py',
    package: null,
    content: [
      'import urllib.request',
      "with urllib.request.urlopen('http://downloads.nestbox.test/index.html', timeout=10) as response:",
      "    open('/tmp/index.html', 'wb').write(response.read())",
      '',
    ].join('\n'),
    shows: (report) => written(report, '/tmp/index.html'),
  },
  {
    title: 'a Node program fetching JSON twice and writing a summary',
    name: 'report.js',
    package: null,
    content: [
      "const http = require('node:http');",
      "const fs = require('node:fs');",
      "const get = (path) => new Promise((resolve, reject) => http.get({ host: 'api.nestbox.test', path, headers: { 'user-agent': 'node' } }, (response) => {",
      "  let body = ''; response.on('data', (chunk) => (body += chunk)).on('end', () => resolve(body));",
      "}).on('error', reject));",
      "(async () => { const pages = [await get('/v1/items'), await get('/v1/users')];",
      "  fs.mkdirSync('/tmp/out', { recursive: true }); fs.writeFileSync('/tmp/out/summary.txt', pages.map((page) => page.length).join(',')); })();",
      '',
    ].join('\n'),
    shows: (report) => written(report, '/tmp/out/summary.txt'),
  },
  {
    title: 'a tar backup of a folder of its own',
    name: 'backup.sh',
    content: [
      '#!/bin/sh',
      'mkdir -p /tmp/data/docs',
      'for n in $(seq 1 30); do echo "note $n" > /tmp/data/docs/note-$n.txt; done',
      'tar czf /tmp/backup.tgz -C /tmp data',
      'rm -rf /tmp/restore && mkdir -p /tmp/restore && tar xzf /tmp/backup.tgz -C /tmp/restore',
      'tar tzf /tmp/backup.tgz | wc -l',
      '',
    ].join('\n'),
    shows: (report) => written(report, '/tmp/backup.tgz'),
  },
  {
    title: 'a build script generating a helper script in /tmp, running it, and compiling Python modules',
    name: 'build.sh',
    content: [
      '#!/bin/sh',
      'set -e',
      'mkdir -p /tmp/build/src',
      'for n in $(seq 1 15); do echo "VALUE = $n" > /tmp/build/src/mod$n.py; done',
      "printf '#!/bin/sh\\nls /tmp/build/src | wc -l > /tmp/build/count.txt\\n' > /tmp/build/gen.sh",
      'chmod +x /tmp/build/gen.sh',
      '/tmp/build/gen.sh',
      'python3 -m compileall -q /tmp/build/src',
      'tar cf /tmp/build/dist.tar -C /tmp/build src',
      '',
    ].join('\n'),
    shows: (report) => written(report, '/tmp/build/count.txt'),
  },
  {
    title: 'an installer writing a program and its configuration under /opt',
    name: 'install.sh',
    content: [
      '#!/bin/sh',
      'set -e',
      'mkdir -p /opt/nbapp/bin /opt/nbapp/etc /opt/nbapp/share',
      "printf '#!/bin/sh\\necho nbapp 1.0\\n' > /opt/nbapp/bin/nbapp",
      'chmod 755 /opt/nbapp/bin/nbapp',
      'echo "port=8080" > /opt/nbapp/etc/nbapp.conf',
      'for n in $(seq 1 20); do echo "data $n" > /opt/nbapp/share/d$n.txt; done',
      '/opt/nbapp/bin/nbapp',
      '',
    ].join('\n'),
    shows: (report) => written(report, '/opt/nbapp/bin/nbapp'),
  },
  {
    title: 'an admin script editing fifteen configuration files in place with perl -pi',
    name: 'edit-configs.sh',
    content: [
      '#!/bin/sh',
      'mkdir -p /tmp/conf.d',
      'for n in $(seq 1 15); do printf "listen=80\\nworkers=2\\n" > /tmp/conf.d/site$n.conf; done',
      "perl -pi -e 's/workers=2/workers=4/' /tmp/conf.d/*.conf",
      'grep -c workers=4 /tmp/conf.d/*.conf > /tmp/conf.d/check.txt',
      '',
    ].join('\n'),
    shows: (report) => written(report, '/tmp/conf.d/check.txt'),
  },
  {
    title: 'curl downloading a plain file',
    name: 'download.sh',
    content: '#!/bin/sh\ncurl -sS -o /tmp/readme.txt http://files.nestbox.test/readme.txt\nwc -c /tmp/readme.txt\n',
    shows: (report) => written(report, '/tmp/readme.txt'),
  },
  {
    title: 'a script that waits 90 s (longer than the analysis) and then writes a file',
    name: 'wait.sh',
    content: '#!/bin/sh\nsleep 90\necho done > /tmp/waited.txt\n',
    shows: (report) => written(report, '/tmp/waited.txt') && report.signatures.some((signature) => signature.name === 'sleep_evasion'),
  },
];

function written(report: ReportView, path: string): boolean {
  return [...(report.behavior.summary.file_created ?? []), ...(report.behavior.summary.file_written ?? [])].includes(path);
}

describe('end to end: benign controls score at most 1 (Linux machine)', { timeout: 900_000 }, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ machines: [{ name: 'linux-benign' }] }, { engine: true, pollMs: 200 });
  });
  after(async () => server?.close());

  for (const control of CONTROLS) {
    it(control.title, async () => {
      const report = await analyse(server, control.name, control.content, control.package === undefined ? 'generic' : control.package);
      const fired = report.signatures.map((signature) => `${signature.name}(${signature.severity}) ${JSON.stringify(signature.marks.slice(0, 2))}`).join('\n');
      assert.ok(control.shows(report), `the sample did its work: ${JSON.stringify(report.behavior.summary)}\n${report.debug.log.join('\n')}\n${fired}`);
      assert.deepEqual(report.signatures.filter((signature) => signature.severity >= 3).map((signature) => signature.name), [], fired);
      assert.ok(report.info.score <= 1, `score ${report.info.score}: ${fired}`);
    });
  }
});

async function analyse(server: TestServer, name: string, content: string, analysisPackage: string | null): Promise<ReportView> {
  const { status, body } = await server.json<{ task_id: number }>('/tasks/create/file', {
    method: 'POST',
    body: form({ timeout: '30', ...(analysisPackage ? { package: analysisPackage } : {}) }, [['file', name, content]]),
  });
  assert.equal(status, 200, JSON.stringify(body));
  const deadline = Date.now() + 240_000;
  for (;;) {
    const { body: view } = await server.json<{ task: { status: string; errors: string[] } }>(`/tasks/view/${body.task_id}`);
    if (view.task.status === 'reported') break;
    assert.ok(!view.task.status.startsWith('failed'), `task ${body.task_id} ${view.task.status}: ${view.task.errors.join('; ')}`);
    assert.ok(Date.now() < deadline, `task ${body.task_id} still ${view.task.status}`);
    await sleep(500);
  }
  return (await server.json<ReportView>(`/tasks/report/${body.task_id}`)).body;
}
