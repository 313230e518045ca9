import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

/**
 * native/monitor/compat-calls.h, which the monitor decodes i386 calls by, against the kernel's own
 * numbers (the headers the monitor is built with): each i386 number is that call's, and each is decoded
 * as the 64-bit call of the same name (the uid calls' `32` and mmap2 aside).
 */
const ASM = '/usr/include/x86_64-linux-gnu/asm';
const COMPAT_CALLS = fileURLToPath(new URL('../../../native/monitor/compat-calls.h', import.meta.url));
/** Calls newer than the headers of some hosts. */
const NEWER: Record<string, number> = { fchmodat2: 452 };
/** i386 calls decoded as a 64-bit call of another name. */
const SAME_AS: Record<string, string> = { mmap2: 'mmap', fcntl64: 'fcntl' };

function numbers(header: string): Map<string, number> {
  const found = new Map(Object.entries(NEWER));
  for (const match of readFileSync(`${ASM}/${header}`, 'utf8').matchAll(/^#define __NR_(\w+) (\d+)$/gm)) found.set(match[1]!, Number(match[2]));
  return found;
}

/** The X(name, number, x86-64 number, ...) entries of one of the header's lists. */
function entries(macro: string): Array<[string, number, number]> {
  const source = readFileSync(COMPAT_CALLS, 'utf8');
  const body = source.slice(source.indexOf(`#define ${macro}(X)`)).split(/\n\s*\n/)[0]!;
  return [...body.matchAll(/X\((\w+), (\d+), (\d+)[,)]/g)].map((match) => [match[1]!, Number(match[2]), Number(match[3])]);
}

describe("the monitor's table of i386 calls", () => {
  it('numbers each i386 call as the kernel does, and decodes it as the 64-bit call it is', () => {
    const i386 = numbers('unistd_32.h');
    const x86_64 = numbers('unistd_64.h');
    const calls = entries('COMPAT_CALLS');
    assert.ok(calls.length > 80, `${calls.length} calls read`);
    for (const [name, nr32, nr64] of calls) {
      assert.equal(nr32, i386.get(name), `i386 ${name}`);
      const as64 = SAME_AS[name] ?? name.replace(/32$/, '');
      assert.equal(nr64, x86_64.get(as64), `${name} decoded as ${as64}`);
    }
    assert.equal(new Set(calls.map(([, nr32]) => nr32)).size, calls.length, 'no i386 number twice');
  });

  it("gives socketcall's sub-calls their 64-bit calls (linux/net.h numbers them)", () => {
    const x86_64 = numbers('unistd_64.h');
    const asCalls: Record<string, string> = { SYS_SEND: 'sendto', SYS_RECV: 'recvfrom' };
    const net = readFileSync('/usr/include/linux/net.h', 'utf8');
    for (const [name, sub, nr64] of entries('SOCKETCALLS')) {
      assert.equal(sub, Number(new RegExp(`#define ${name}\\s+(\\d+)`).exec(net)?.[1]), name);
      assert.equal(nr64, x86_64.get(asCalls[name] ?? name.slice(4).toLowerCase()), name);
    }
  });
});
