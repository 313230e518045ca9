import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { untilBlockedOn } from '../../src/machinery/linux/sandbox-waiting.js';

/**
 * A real process that reads a byte from its fd 5, then one from its fd 4, as a sandbox's pid 1 busy with
 * its set-up and then waiting at its block fd.
 */
function reader() {
  const child = spawn('/usr/bin/python3', ['-c', 'import os; os.read(5, 1); os.read(4, 1)'], {
    stdio: ['ignore', 'ignore', 'ignore', 'ignore', 'pipe', 'pipe'],
  });
  const send = (fd: number) => (child.stdio[fd] as Writable).end('g');
  return { child, send };
}

describe('seeing a sandbox wait at its block fd', () => {
  it('resolves once the process reads that fd, not while it does something else', async () => {
    const { child, send } = reader();
    assert.equal(await untilBlockedOn(child.pid!, 4, 500), false, 'still reading fd 5');
    send(5);
    assert.equal(await untilBlockedOn(child.pid!, 4), true);
    send(4);
    await once(child, 'exit');
  });

  it('answers false for a process that is gone', async () => {
    const { child, send } = reader();
    send(5);
    send(4);
    await once(child, 'exit');
    assert.equal(await untilBlockedOn(child.pid!, 4), false);
  });
});
