import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_OPEN_CALLS, RelayDecoder, type WindowsCall } from '../../src/report/wine-calls.js';

/**
 * Wine writes its debug output to the Unix stderr of the program's own process, where the program can write
 * too (its STD_ERROR handle, ntdll's exported __wine_dbg_output, or a plain write system call), so a sample
 * can forge well-formed relay lines. Forged lines cannot be told from Wine's; what processing can do is keep
 * them from costing more than a bounded amount of memory: `Call` lines that never return are given up,
 * oldest first, beyond MAX_OPEN_CALLS.
 */

const call = (tid: number, n: number) =>
  `1.000:0108:${tid.toString(16).padStart(4, '0')}:Call KERNEL32.CreateFileW(0021faa0 L"C:\\\\users\\\\abecker\\\\f${n}.txt",40000000,00000000,00000000,00000002,00000080,00000000) ret=14000165e`;

describe('a flood of relay calls that never return', () => {
  it('keeps at most MAX_OPEN_CALLS waiting, giving the oldest up as calls that never returned, none lost', () => {
    const decoder = new RelayDecoder();
    const total = MAX_OPEN_CALLS * 3;
    const given: WindowsCall[] = [];
    for (let n = 0; n < total; n++) given.push(...decoder.line(call(0x1000 + (n % 500), n)));
    const waiting = decoder.unfinished();
    assert.equal(waiting.length, MAX_OPEN_CALLS);
    assert.equal(given.length, total - MAX_OPEN_CALLS);
    assert.equal(given[0]?.args.lpFileName, 'C:\\users\\abecker\\f0.txt', 'the oldest is given up first');
    assert.ok(given.every((entry) => entry.api === 'CreateFileW' && entry.status === false), 'given up as never returned');
    assert.equal(waiting.at(-1)?.args.lpFileName, `C:\\users\\abecker\\f${total - 1}.txt`);
  });

  it("still pairs a real thread's calls with their returns during the flood", () => {
    const decoder = new RelayDecoder();
    const real: WindowsCall[] = [];
    for (let n = 0; n < MAX_OPEN_CALLS * 2; n++) {
      decoder.line(call(0x2000, n));
      if (n === MAX_OPEN_CALLS) {
        real.push(...decoder.line('1.001:0108:010c:Call KERNEL32.DeleteFileW(0021faa0 L"C:\\\\users\\\\abecker\\\\real.txt") ret=14000165e'));
        real.push(...decoder.line('1.002:0108:010c:Ret  KERNEL32.DeleteFileW() retval=00000001 ret=14000165e'));
      }
    }
    const deleted = real.filter((entry) => entry.api === 'DeleteFileW');
    assert.equal(deleted.length, 1);
    assert.equal(deleted[0]?.status, true);
    assert.equal(deleted[0]?.args.lpFileName, 'C:\\users\\abecker\\real.txt');
  });
});
