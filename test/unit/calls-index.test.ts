import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { CallsIndexBuilder } from '../../src/report/calls-index.js';
import { CallsIndex } from '../../src/report/calls-index-query.js';
import type { BehaviorEvent } from '../../src/report/events.js';

/** The calls index on its own (real SQLite files): what a search matches, its limit, its versions. */
const dir = mkdtempSync(join(tmpdir(), 'nestbox-calls-index-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const event = (pid: number, body: Record<string, unknown>, ts = 1_700_000_000): BehaviorEvent =>
  ({ ts, pid, ppid: 1, tid: pid, comm: 'sample', ...body }) as BehaviorEvent;
const process = (pid: number) => ({ pid, ppid: 1, process_name: `p${pid}`, command_line: `p${pid} --run`, first_seen: pid });

let files = 0;
async function built(events: BehaviorEvent[], limit?: number): Promise<CallsIndex> {
  const path = join(dir, `calls-${files++}.sqlite`);
  const builder = new CallsIndexBuilder(path, limit);
  for (const each of events) builder.event(each);
  await builder.complete([process(10), process(11)]);
  assert.ok(!existsSync(`${path}.tmp`));
  return CallsIndex.open(path)!;
}

const PATHS = ['/tmp/a "quoted" name', 'C:\\Users\\x', '/tmp/100%_done', '/tmp/plain'];

describe('calls index', () => {
  it('finds argument text as the sample wrote it: quotes, backslashes, % and _ are no syntax', async () => {
    const index = await built(PATHS.map((path) => event(10, { kind: 'file.open', path, flags: 0, mode: 0, ret: 3 })));
    const found = (text: string) => index.calls({ text, offset: 0, limit: 10 }).calls.map((call) => call.arguments.path);
    assert.deepEqual(found('"quoted"'), [PATHS[0]]);
    assert.deepEqual(found('users\\x'), [PATHS[1]]);
    assert.deepEqual(found('100%_'), [PATHS[2]]);
    assert.deepEqual(found('%'), [PATHS[2]]);
    assert.deepEqual(found('_'), [PATHS[2]]);
    assert.deepEqual(found('/TMP/'), [PATHS[0], PATHS[2], PATHS[3]]);
    index.close();
  });

  it('leaves out the tracer notes and call counts, and counts the calls of each process', async () => {
    const index = await built([
      event(0, { kind: 'tracer.info', tracer: 'ebpf', message: 'recording' }),
      event(10, { kind: 'process.exec', path: '/bin/p10', argv: ['p10'], ret: 0 }),
      event(10, { kind: 'process.counts', counts: { openat: 3 } }),
      event(11, { kind: 'net.connect', fd: 3, family: 'inet', address: '192.0.2.1', port: 80, ret: -115 }),
      event(11, { kind: 'file.delete', path: '/tmp/x', ret: 0 }),
    ]);
    assert.deepEqual(
      index.processes().processes.map((row) => [row.pid, row.name, row.calls]),
      [[10, 'p10', 1], [11, 'p11', 2]],
    );
    const { calls, total } = index.calls({ offset: 0, limit: 10 });
    assert.equal(total, 3);
    assert.deepEqual(calls.map((call) => [call.pid, call.api, call.category, call.status, call.return]), [
      [10, 'execve', 'process', true, 0],
      [11, 'connect', 'network', false, -115],
      [11, 'unlink', 'file', true, 0],
    ]);
    index.close();
  });

  it('keeps calls up to its limit and counts the others', async () => {
    const index = await built(Array.from({ length: 7 }, (_, i) => event(10, { kind: 'file.delete', path: `/tmp/${i}`, ret: 0 })), 5);
    assert.equal(index.calls({ offset: 0, limit: 10 }).total, 5);
    assert.equal(index.processes().omitted, 2);
    index.close();
  });

  it('is not opened when missing or of another version, and leaves nothing when discarded', () => {
    const path = join(dir, 'other-version.sqlite');
    const db = new BetterSqlite3(path);
    db.pragma('user_version = 999');
    db.close();
    assert.equal(CallsIndex.open(path), undefined);
    assert.equal(CallsIndex.open(join(dir, 'missing.sqlite')), undefined);
    const discarded = new CallsIndexBuilder(join(dir, 'discarded.sqlite'));
    discarded.event(event(10, { kind: 'file.delete', path: '/tmp/x', ret: 0 }));
    discarded.discard();
    assert.deepEqual([existsSync(join(dir, 'discarded.sqlite')), existsSync(join(dir, 'discarded.sqlite.tmp'))], [false, false]);
  });
});
