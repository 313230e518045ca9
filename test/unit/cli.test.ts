import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';

const run = promisify(execFile);
const cli = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'cli', 'main.js');

/** The `nestbox` command as a user runs it: a real service process and client commands against it. */
describe('nestbox CLI', () => {
  let home: string;
  let service: ChildProcessWithoutNullStreams;
  let firstOutput = '';
  let errorOutput = '';
  let url = '';

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'nestbox-cli-'));
    service = spawn(process.execPath, [cli, '--home', home, 'start', '--host', '127.0.0.1', '--port', '0'], {
      env: { ...process.env, NESTBOX_LOGGING_LEVEL: 'warn', NESTBOX_MACHINES: '[]' },
    });
    service.stderr.on('data', (chunk: Buffer) => (errorOutput += chunk.toString()));
    url = await new Promise<string>((resolve, reject) => {
      service.stdout.on('data', (chunk: Buffer) => {
        firstOutput += chunk.toString();
        const match = /listening on (http:\/\/\S+)/.exec(firstOutput);
        if (match) resolve(match[1]!);
      });
      service.on('exit', (code) => reject(new Error(`service exited with ${code}: ${firstOutput}`)));
    });
  });
  after(() => {
    service.kill('SIGTERM');
    rmSync(home, { recursive: true, force: true });
  });

  it('creates the configuration on first start and prints the new token once', () => {
    assert.match(firstOutput, /Created .*config\.yaml/);
    assert.match(firstOutput, /API token[^\n]*\n\s+[A-Za-z0-9_-]{22}\n/);
  });

  it('shows the status through the API with the configured token', async () => {
    const { stdout } = await run(process.execPath, [cli, '--home', home, '--url', url, 'status']);
    const status = JSON.parse(stdout);
    assert.equal(typeof status.tasks.total, 'number');
    assert.equal(status.machines.total, 0);
  });

  it('fails clearly with a wrong token', async () => {
    await assert.rejects(run(process.execPath, [cli, '--url', url, '--token', 'wrong', 'status']), (error: { stderr: string }) =>
      /HTTP 401/.test(error.stderr),
    );
  });

  it('lists tasks (none yet)', async () => {
    const { stdout } = await run(process.execPath, [cli, '--home', home, '--url', url, 'list']);
    assert.equal(stdout, '');
  });

  it('stops on SIGTERM, having printed no warning of Node or of a library (deprecations) while it ran', async () => {
    // Checked once the process has ended, so that nothing it wrote to stderr can still be on its way.
    const ended = new Promise((resolve) => service.once('exit', resolve));
    service.kill('SIGTERM');
    await ended;
    assert.doesNotMatch(errorOutput, /warning|deprecat/i, errorOutput);
  });

  it('says so when the service cannot be reached', async () => {
    await assert.rejects(run(process.execPath, [cli, '--url', 'http://127.0.0.1:9', '--token', '', 'status']), (error: { stderr: string }) =>
      /cannot reach nestbox/.test(error.stderr),
    );
  });
});
