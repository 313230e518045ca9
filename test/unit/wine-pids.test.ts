import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WinePidMap } from '../../src/machinery/linux/wine-pids.js';

/**
 * wineserver's request trace, in the form Wine 8 prints it (lines cut after the fields read), fed to the
 * map the way the machine does: nothing is looked up while the sample runs, so a process that has ended
 * by the time its lines are read is mapped all the same.
 */
const BOOT = ['0024: init_first_thread( unix_pid=5, unix_tid=5, debug_level=0, reply_fd=7, wait_fd=9 )', '0024: init_first_thread() = 0 { pid=0020, tid=0024, server_start=0 }'];
const SAMPLE = [
  // The sample's first process: the trace came on with it, so only the answer is there.
  '0104: init_first_thread() = 0 { pid=0100, tid=0104, server_start=1dd7e47264cb7b8 (-0.0002510), session_id=00000001 }',
  // It makes a thread of its own.
  '0104: new_thread( process=ffffffff, access=001fffff, flags=00000000, request_fd=14, objattr={} )',
  '0104: new_thread() = 0 { tid=0108, handle=0040 }',
  '0108: init_thread( unix_tid=31, reply_fd=16, wait_fd=18, teb=7ffd000, entry=140001000 )',
  '0108: init_thread() = 0 { suspend=0 }',
  // It starts a second copy, which exits at once.
  '0104: new_process( token=0000, debug=0000, parent_process=0000, flags=00000000, socket_fd=13 )',
  '0104: new_process() = 0 { info=0044, pid=0110, handle=0048 }',
  '0104: new_thread( process=0048, access=001fffff, flags=00000001, request_fd=-1, objattr={} )',
  '0104: new_thread() = 0 { tid=0114, handle=004c }',
  '0114: init_first_thread( unix_pid=40, unix_tid=40, debug_level=1, reply_fd=6, wait_fd=8 )',
  '0114: init_first_thread() = 0 { pid=0110, tid=0114, server_start=1dd7e47264cb7b8 (-0.0440050) }',
  '0114: terminate_process( handle=ffffffff, exit_code=1 )',
];

describe("the map of Wine's process ids", () => {
  it("records the machine's ids of every process and thread of the sample, and the first process's host pid", async () => {
    const map = new WinePidMap(async () => 4321);
    map.feed(`${BOOT.join('\n')}\n`);
    map.released();
    // In pieces, split inside a line, as a pipe delivers them.
    const text = `${SAMPLE.join('\n')}\n`;
    map.feed(text.slice(0, 200));
    map.feed(text.slice(200));
    assert.deepEqual(await map.result(), [
      { winpid: 0x100, pid: 4321, nstids: { [0x108]: 31 } },
      { winpid: 0x110, nspid: 40, nstids: { [0x114]: 40 } },
    ]);
  });

  it("leaves Wine's boot out, and a Wine pid used again names its new process", async () => {
    const map = new WinePidMap(async () => undefined);
    map.feed(`${BOOT.join('\n')}\n`);
    map.released();
    map.feed(`${SAMPLE.slice(0, 1).join('\n')}\n`);
    map.feed('0120: init_first_thread( unix_pid=50, unix_tid=50, debug_level=1 )\n0120: init_first_thread() = 0 { pid=0110, tid=0120 }\n');
    map.feed('0124: init_first_thread( unix_pid=51, unix_tid=51, debug_level=1 )\n0124: init_first_thread() = 0 { pid=0110, tid=0124 }\n');
    assert.deepEqual(await map.result(), [
      { winpid: 0x100, nstids: {} },
      { winpid: 0x110, nspid: 51, nstids: { [0x124]: 51 } },
    ]);
  });
});
