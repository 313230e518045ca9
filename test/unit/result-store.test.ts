import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isNestboxError } from '../../src/errors.js';
import { StorageLayout } from '../../src/storage/layout.js';
import { LocalResultStore } from '../../src/storage/result-store.js';
import { collect } from '../helpers/tar-archive.js';

/** The local-folder result store: results are put whole or not at all, in the usual layout. */
describe('local result store', () => {
  let home: string;
  let layout: StorageLayout;
  let store: LocalResultStore;
  const report = (id: number) => join(layout.analysis(id).reportJson);
  const fillWith = (text: string) => async (folder: string) => {
    mkdirSync(join(folder, 'reports'));
    writeFileSync(join(folder, 'reports', 'report.json'), text);
    writeFileSync(join(folder, 'dump.pcap'), 'pcap');
  };

  before(() => {
    home = mkdtempSync(join(tmpdir(), 'nestbox-result-store-'));
    layout = new StorageLayout(join(home, 'storage'), join(home, 'tmp'));
    layout.ensure();
    store = new LocalResultStore(layout);
  });
  after(() => rmSync(home, { recursive: true, force: true }));

  it('puts results in storage/analyses/<id>, and replaces earlier ones whole', async () => {
    await store.put(1, fillWith('first'));
    assert.equal(readFileSync(report(1), 'utf8'), 'first');
    await store.put(1, async (folder) => writeFileSync(join(folder, 'only.txt'), 'second'));
    assert.deepEqual(await store.list(1), ['only.txt']);
    assert.deepEqual(readdirSync(store.incoming), []);
  });

  it('takes concurrent puts of one task in turn: one of them whole, nothing left over', async () => {
    await store.put(7, fillWith('earlier'));
    const texts = ['a', 'b', 'c', 'd'];
    await Promise.all(texts.map((text) => store.put(7, fillWith(text))));
    assert.ok(texts.includes(readFileSync(report(7), 'utf8')));
    assert.deepEqual(await store.list(7), ['dump.pcap', 'reports/report.json']);
    assert.deepEqual(readdirSync(store.incoming), []);
  });

  it('keeps the earlier results, and nothing of the new ones, when filling fails', async () => {
    await store.put(2, fillWith('kept'));
    await assert.rejects(
      store.put(2, async (folder) => {
        await fillWith('half')(folder);
        throw new Error('cut off');
      }),
      /cut off/,
    );
    assert.equal(readFileSync(report(2), 'utf8'), 'kept');
    assert.deepEqual(readdirSync(store.incoming), []);
    await assert.rejects(store.put(3, async () => Promise.reject(new Error('nothing'))), /nothing/);
    assert.ok(!existsSync(layout.analysis(3).dir));
  });

  it('lists, opens and deletes a task\'s results, and refuses paths that leave them', async () => {
    await store.put(4, fillWith('open me'));
    assert.deepEqual(await store.list(4), ['dump.pcap', 'reports/report.json']);
    assert.equal((await collect(await store.open(4, 'reports/report.json'))).toString(), 'open me');
    await assert.rejects(store.open(4, 'reports/none.json'), (error) => isNestboxError(error, 'not_found'));
    for (const path of ['../4/dump.pcap', 'reports/../dump.pcap', '/etc/passwd', '']) {
      await assert.rejects(store.open(4, path), (error) => isNestboxError(error, 'invalid_input'), path);
    }
    await store.delete(4);
    assert.deepEqual(await store.list(4), []);
  });

  it('after a crash, puts back results moved aside and removes unfinished uploads', async () => {
    await store.put(5, fillWith('moved aside'));
    const aside = join(store.incoming, '5-abcdef.old');
    await import('node:fs/promises').then(({ rename }) => rename(layout.analysis(5).dir, aside));
    mkdirSync(join(store.incoming, '6-ghijkl'));
    await store.sweep();
    assert.equal(readFileSync(report(5), 'utf8'), 'moved aside');
    assert.deepEqual(readdirSync(store.incoming), []);
  });
});
