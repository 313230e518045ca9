import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { scoreOf } from '../../src/signatures/index.js';
import { corpusSample } from '../helpers/corpus.js';
import { analyseSample } from '../helpers/sample-through-api.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Issue 11's static capability signatures end to end: Windows executables submitted through the API to the
 * Linux machine, which cannot run them, still get their static analysis, the signatures fed by the static
 * rules and the score those give.
 */

describe('static capability signatures of a PE analysed on the Linux machine', { timeout: 600_000 }, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ machines: [{ name: 'linux1' }] }, { engine: true, pollMs: 200 });
  });
  after(() => server.close());

  const analyse = (id: string, name: string): Promise<any> =>
    analyseSample(server, name, readFileSync(corpusSample(id).path), { timeout: '10' });

  it('reports an injector that also checks for debuggers with its static signatures, scored at least 5', async () => {
    const report = await analyse('malicious/pe-injector', 'injector.exe');
    const imported = report.static.pe_imports.flatMap((dll: { imports: Array<{ name: string }> }) => dll.imports.map((entry) => entry.name));
    for (const api of ['OpenProcess', 'VirtualAllocEx', 'WriteProcessMemory', 'CreateRemoteThread']) assert.ok(imported.includes(api), api);
    assert.ok(report.target.file.yara.some((match: { name: string }) => match.name === 'pe_remote_thread_injection'));
    const byName = new Map<string, any>(report.signatures.map((signature: { name: string }) => [signature.name, signature]));
    for (const name of ['static_pe_injection', 'static_antidebug', 'static_capability_combination', 'packed_binary']) {
      assert.ok(byName.has(name), `${name} missing: ${[...byName.keys()].join(', ')}`);
    }
    assert.equal(byName.get('static_pe_injection').severity, 2, 'read from the file alone: suspicious; the combination makes the verdict');
    assert.equal(byName.get('static_capability_combination').severity, 3);
    assert.ok('T1055.012' in byName.get('static_pe_injection').ttp, 'hollowing is among the techniques');
    assert.equal(report.info.score, scoreOf(report.signatures));
    assert.ok(report.info.score >= 5, `score ${report.info.score}`);
  });

  it('finds nothing in a PE that only prints: no static signature, score at most 1', async () => {
    const report = await analyse('benign/pe-hello', 'hello.exe');
    assert.ok(report.static.pe_imports.length > 0, 'its static analysis is there');
    const names = report.signatures.map((signature: { name: string }) => signature.name);
    assert.deepEqual(names.filter((name: string) => name.startsWith('static_') || name === 'packed_binary'), []);
    assert.ok(report.info.score <= 1, `score ${report.info.score}: ${names.join(', ')}`);
  });
});
