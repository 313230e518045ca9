import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { distStatusOf } from '../../src/api/distributed/task-json.js';
import type { TaskRow } from '../../src/db/schema.js';

/** Only the fields the distributed status reads; the rest of a row does not matter to it. */
function row(fields: Partial<TaskRow>): TaskRow {
  return { status: 'pending', node: null, node_task_id: null, delegated_on: null, ...fields } as TaskRow;
}

describe("a task's status in Cuckoo's distributed API", () => {
  it('follows Cuckoo: pending, assigned to a node, processing, finished', () => {
    assert.equal(distStatusOf(row({})), 'pending');
    assert.equal(distStatusOf(row({ node: 'remote' })), 'assigned');
    assert.equal(distStatusOf(row({ status: 'running', node: 'worker-b' })), 'processing');
    assert.equal(distStatusOf(row({ status: 'completed', node: 'remote', delegated_on: '2026-11-27T06:00:00Z', node_task_id: 7 })), 'processing');
    assert.equal(distStatusOf(row({ status: 'reported', node: 'remote' })), 'finished');
    assert.equal(distStatusOf(row({ status: 'failed_analysis' })), 'finished');
  });

  it('keeps a task assigned while the main node is handing it to a remote node that has not taken it yet', () => {
    const handing = row({ status: 'running', node: 'remote', delegated_on: '2026-11-27T06:00:00Z' });
    assert.equal(distStatusOf(handing), 'assigned');
    assert.equal(distStatusOf({ ...handing, node_task_id: 12 }), 'processing');
  });
});
