import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ReorderBuffer } from '../../src/machinery/host/tracer/reorder-buffer.js';

interface Item {
  ts: number;
  id: string;
}

function buffer(window = 1): { reorder: ReorderBuffer<Item>; released: string[] } {
  const released: string[] = [];
  return { reorder: new ReorderBuffer<Item>(window, (item) => released.push(item.id)), released };
}

describe('the reorder buffer', () => {
  it('releases only what is older than the newest record by more than the window', () => {
    const { reorder, released } = buffer(1);
    for (const [ts, id] of [[1, 'a'], [1.5, 'b'], [2.2, 'c'], [3, 'd']] as const) reorder.push({ ts, id });
    reorder.releaseSettled();
    assert.deepEqual(released, ['a', 'b']);
    reorder.releaseAll();
    assert.deepEqual(released, ['a', 'b', 'c', 'd']);
  });

  it('puts a record that came a little late in its place, after records of the same time', () => {
    const { reorder, released } = buffer();
    for (const [ts, id] of [[1, 'a'], [3, 'b'], [2, 'c'], [3, 'd'], [2, 'e'], [0.5, 'f']] as const) reorder.push({ ts, id });
    reorder.releaseAll();
    assert.deepEqual(released, ['f', 'a', 'c', 'e', 'b', 'd']);
  });

  it('sorts, stably, records that came far out of order (a CPU buffer emptied late)', () => {
    const { reorder, released } = buffer();
    const late: Item[] = [];
    for (let i = 0; i < 200; i++) reorder.push({ ts: 10 + i, id: `on-time-${i}` });
    for (let i = 0; i < 200; i++) late.push({ ts: 10 + i, id: `late-${i}` });
    for (const item of late) reorder.push(item);
    reorder.releaseAll();
    const expected = late.flatMap((item, i) => [`on-time-${i}`, item.id]);
    assert.deepEqual(released, expected);
  });

  it('releases nothing twice and keeps what is left in order after a release', () => {
    const { reorder, released } = buffer(1);
    reorder.push({ ts: 1, id: 'a' });
    reorder.push({ ts: 5, id: 'b' });
    reorder.releaseSettled();
    reorder.push({ ts: 4.5, id: 'c' });
    reorder.push({ ts: 7, id: 'd' });
    reorder.releaseSettled();
    reorder.releaseAll();
    assert.deepEqual(released, ['a', 'c', 'b', 'd']);
  });
});
