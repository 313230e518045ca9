import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { defaultDroppedFileLimits } from '../../src/machinery/dropped/budget.js';
import { CuckooResultServer } from '../../src/machinery/qemu/cuckoo-result-server.js';
import { openResultLink, RESULT_LINK } from '../../src/machinery/qemu/result-link.js';
import { AnalysisPaths } from '../../src/storage/layout.js';

/**
 * The result link of a Windows guest, in a real network namespace: what connects to the link's address
 * inside the task's machine namespace (where the guest's card is bridged) reaches the task's result
 * server on the host, in Cuckoo's result protocol; the host's own namespace does not listen there.
 * The namespace stands for the task's machine namespace: a bridge as the qemu machinery makes it.
 */
const NETNS = `nbtest-rl-${process.pid}`;
const PORT = 2042;
let work: string;

/** Runs a script in the namespace; asynchronously, since the result server answering it runs in this process. */
async function inNamespace(script: string): Promise<string> {
  const { stdout } = await promisify(execFile)('ip', ['netns', 'exec', NETNS, process.execPath, '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 10_000 });
  return stdout;
}

describe('result link of a Windows guest (real namespace)', () => {
  before(() => {
    work = mkdtempSync(join(tmpdir(), 'nestbox-result-link-'));
    execFileSync('ip', ['netns', 'add', NETNS]);
    execFileSync('ip', ['-netns', NETNS, '-batch', '-'], { input: 'link set lo up\nlink add nbq-br type bridge\nlink set nbq-br up\n' });
  });

  after(() => {
    execFileSync('ip', ['netns', 'delete', NETNS]);
    rmSync(work, { recursive: true, force: true });
  });

  it('carries what the guest sends to the link address to the task\'s result server, and stops with close()', async () => {
    const paths = new AnalysisPaths(join(work, 'task'));
    paths.create();
    const socket = join(work, 'results.sock');
    const results = await CuckooResultServer.listen({ path: socket }, {
      paths,
      uploads: { maxFiles: 5, maxFileBytes: 1 << 20, maxTotalBytes: 1 << 22 },
      droppedFiles: defaultDroppedFileLimits(),
      logLimitBytes: 1 << 16,
      behaviourLimitBytes: 1 << 20,
    });
    const link = await openResultLink(NETNS, PORT, socket);
    let closed;
    try {
      const sent = await inNamespace(`
        import { connect } from 'node:net';
        const send = (data) => new Promise((resolve, reject) => {
          const socket = connect(${PORT}, '${RESULT_LINK.host}', () => socket.end(data));
          socket.on('close', resolve).on('error', reject);
        });
        await send('LOG\\nanalyzer started in the guest\\n');
        await send('FILE 2\\nfiles/77/report.doc\\nC:\\\\Users\\\\abecker\\\\Documents\\\\report.doc\\n1200\\nencrypted!');
        process.stdout.write('sent');
      `);
      assert.equal(sent, 'sent');
      const listeningInside = execFileSync('ip', ['netns', 'exec', NETNS, 'ss', '-Hltn'], { encoding: 'utf8' });
      assert.match(listeningInside, new RegExp(`${RESULT_LINK.host.replaceAll('.', '\\.')}:${PORT}\\b`));
      const listeningOnHost = execFileSync('ss', ['-Hltn'], { encoding: 'utf8' });
      assert.ok(!listeningOnHost.includes(`${RESULT_LINK.host}:${PORT}`), 'the link exists only in the task\'s namespace');
    } finally {
      await link.close();
      closed = results.close();
    }
    const summary = await closed;
    assert.equal(readFileSync(paths.analysisLog, 'utf8'), 'analyzer started in the guest\n');
    const dropped = summary.uploads.entries.find((entry) => entry.path?.startsWith('files/'));
    assert.equal(dropped?.filepath, 'C:\\Users\\abecker\\Documents\\report.doc');
    assert.equal(readFileSync(join(paths.dir, dropped!.path!), 'utf8'), 'encrypted!');
    const listening = execFileSync('ip', ['netns', 'exec', NETNS, 'ss', '-Hltn'], { encoding: 'utf8' });
    assert.equal(listening.trim(), '', 'the forwarder is gone once the link is closed');
  });
});
