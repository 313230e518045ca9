import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { splitArguments } from '../../src/analysis/packages/arguments.js';
import { choosePackage, findPackage, PACKAGES } from '../../src/analysis/packages/index.js';
import { lockFile } from '../../src/machinery/host/file-lock.js';
import { isMachineId, machineId } from '../../src/machinery/host/machine-id.js';
import { I386, sandboxSeccompProgram, X86_64 } from '../../src/machinery/linux/seccomp.js';
import { decodeXwd } from '../../src/machinery/linux/xwd-image.js';
import { linuxSettingsSchema } from '../../src/machinery/linux/settings.js';
import { configTemplate } from '../../src/config/template.js';
import { checkRangeIsFree, hostIdOf, machineIdRange } from '../../src/machinery/linux/host-ids.js';
import { isNestboxError } from '../../src/errors.js';
import { configSchema } from '../../src/config/schema.js';
import { MACHINE_KINDS } from '../../src/config/machine-settings.js';
import { createMachinery, machineryKinds, machineryResolver } from '../../src/machinery/registry.js';
import { pino } from 'pino';

/** Runs a classic BPF seccomp program on one system call, as the kernel would. */
function runFilter(program: Buffer, call: { arch: number; nr: number; args?: number[] }): number {
  const data = Buffer.alloc(64);
  data.writeInt32LE(call.nr, 0);
  data.writeUInt32LE(call.arch, 4);
  (call.args ?? []).forEach((value, index) => data.writeBigUInt64LE(BigInt(value), 16 + 8 * index));
  let accumulator = 0;
  for (let pc = 0; pc < program.length / 8; ) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    switch (code) {
      case 0x20: accumulator = data.readUInt32LE(k); pc++; break;
      case 0x15: pc += 1 + (accumulator === k ? jt : jf); break;
      case 0x35: pc += 1 + (accumulator >= k ? jt : jf); break;
      case 0x45: pc += 1 + ((accumulator & k) !== 0 ? jt : jf); break;
      case 0x06: return k;
      default: throw new Error(`unexpected BPF instruction ${code.toString(16)}`);
    }
  }
  throw new Error('the filter fell off its end');
}

const ALLOW = 0x7fff0000;
const EPERM = 0x00050001;
const ENOSYS = 0x00050026;

/** System call numbers of this machine's kernel headers, to check the filter's tables against. */
function headerNumbers(file: string): Map<string, number> {
  const numbers = new Map<string, number>();
  for (const match of readFileSync(file, 'utf8').matchAll(/#define __NR_(\w+) (\d+)/g)) numbers.set(match[1]!, Number(match[2]));
  return numbers;
}

describe('seccomp filter of the sandbox', () => {
  const program = sandboxSeccompProgram();
  const x64 = X86_64.arch;
  const i386 = I386.arch;

  it('denies escape-relevant calls with EPERM on both x86 ABIs', () => {
    for (const table of [X86_64, I386]) {
      for (const [name, nr] of Object.entries(table.denied)) assert.equal(runFilter(program, { arch: table.arch, nr }), EPERM, name);
    }
  });

  it('keeps ptrace, module loading, memfd_create and ordinary calls allowed', () => {
    const allowed = { read: 0, write: 1, open: 2, execve: 59, ptrace: 101, init_module: 175, finit_module: 313, memfd_create: 319, socket: 41, connect: 42 };
    for (const [name, nr] of Object.entries(allowed)) assert.equal(runFilter(program, { arch: x64, nr }), ALLOW, name);
    assert.equal(runFilter(program, { arch: i386, nr: 26 }), ALLOW, 'i386 ptrace');
    assert.equal(runFilter(program, { arch: i386, nr: 350 }), ALLOW, 'i386 finit_module');
  });

  it('refuses new user namespaces through clone, TIOCSTI, clone3 and the x32 ABI', () => {
    assert.equal(runFilter(program, { arch: x64, nr: 56, args: [0x10000000 | 17] }), EPERM);
    assert.equal(runFilter(program, { arch: x64, nr: 56, args: [0x01200011] }), ALLOW, 'fork-like clone');
    assert.equal(runFilter(program, { arch: x64, nr: 16, args: [0, 0x5412] }), EPERM);
    assert.equal(runFilter(program, { arch: x64, nr: 16, args: [0, 0x5401] }), ALLOW, 'TCGETS');
    assert.equal(runFilter(program, { arch: x64, nr: 435 }), ENOSYS);
    assert.equal(runFilter(program, { arch: x64, nr: 0x40000000 | 1 }), EPERM);
    assert.equal(runFilter(program, { arch: 0xc00000b7, nr: 1 }), 0x80000000, 'other architectures are killed');
  });

  it('uses the numbers of the kernel headers', { skip: !existsSync('/usr/include/x86_64-linux-gnu/asm/unistd_64.h') }, () => {
    const tables = [
      { table: X86_64, header: '/usr/include/x86_64-linux-gnu/asm/unistd_64.h' },
      { table: I386, header: '/usr/include/x86_64-linux-gnu/asm/unistd_32.h' },
    ];
    for (const { table, header } of tables) {
      const numbers = headerNumbers(header);
      for (const [name, nr] of Object.entries(table.denied)) {
        if (numbers.has(name)) assert.equal(nr, numbers.get(name), `${name} in ${header}`);
      }
      assert.equal(table.clone, numbers.get('clone'));
      assert.equal(table.ioctl, numbers.get('ioctl'));
      assert.equal(table.clone3, numbers.get('clone3'));
    }
  });
});

describe('analysis packages', () => {
  const pick = (fileName: string, fileType: string) => choosePackage({ requested: '', category: 'file', target: { fileName, fileType }, reboot: false }).name;

  it('are chosen from the libmagic type and the file name', () => {
    assert.equal(pick('a.out', 'ELF 64-bit LSB pie executable, x86-64, version 1 (SYSV), dynamically linked'), 'elf');
    assert.equal(pick('x', 'ELF 32-bit LSB executable, Intel 80386, statically linked'), 'elf');
    assert.equal(pick('s', 'POSIX shell script, ASCII text executable'), 'bash');
    assert.equal(pick('s', 'Bourne-Again shell script, ASCII text executable'), 'bash');
    assert.equal(pick('run.sh', 'ASCII text'), 'bash');
    assert.equal(pick('x', 'Python script, ASCII text executable'), 'python');
    assert.equal(pick('tool.py', 'ASCII text'), 'python');
    assert.equal(pick('x', 'Perl script text executable'), 'perl');
    assert.equal(pick('index.js', 'JavaScript source, ASCII text'), 'nodejs');
    assert.equal(pick('x', 'a /usr/bin/env node script, ASCII text executable'), 'nodejs');
    assert.equal(pick('b.zip', 'Zip archive data, at least v2.0 to extract, compression method=deflate'), 'zip');
    assert.equal(pick('b.tgz', 'gzip compressed data, from Unix'), 'zip');
    assert.equal(pick('b.7z', '7-zip archive data, version 0.4'), 'zip');
    assert.equal(pick('mystery', 'data'), 'elf');
  });

  it('honour the package asked for, by name or alias, and reject unknown ones with a clear error', () => {
    assert.equal(choosePackage({ requested: 'python', category: 'file', reboot: false }).name, 'python');
    assert.equal(findPackage('sh')?.name, 'bash');
    assert.equal(findPackage('generic')?.name, 'elf');
    assert.equal(choosePackage({ requested: '', category: 'url', reboot: false }).name, 'url');
    assert.equal(choosePackage({ requested: '', category: 'file', reboot: true }).name, 'reboot');
    assert.throws(
      () => choosePackage({ requested: 'doc', category: 'file', reboot: false }),
      (error: unknown) => isNestboxError(error, 'invalid_input') && /unknown analysis package "doc"/.test(error.message),
    );
    assert.equal(new Set(PACKAGES.flatMap((p) => [p.name, ...p.aliases])).size, PACKAGES.flatMap((p) => [p.name, ...p.aliases]).length);
  });

  it('pass the arguments option as words', () => {
    const context = { path: '/tmp/s.py', url: '', options: { arguments: `-v "two words" 'x y' a\\ b` }, passwords: [] };
    assert.deepEqual(findPackage('python')!.command(context), ['/usr/bin/python3', '/tmp/s.py', '-v', 'two words', 'x y', 'a b']);
    assert.deepEqual(findPackage('elf')!.command({ ...context, options: {} }), ['/tmp/s.py']);
    assert.deepEqual(splitArguments(`  a  "" b `), ['a', '', 'b']);
    assert.deepEqual(splitArguments(undefined), []);
  });

  it('open URLs with chromium and unpack archives with the given or configured passwords', () => {
    const url = findPackage('url')!.command({ path: '', url: 'http://example.test/x', options: {}, passwords: [] });
    assert.equal(url[0], '/usr/bin/chromium');
    assert.equal(url.at(-1), 'http://example.test/x');
    const zip = findPackage('zip')!;
    assert.deepEqual(zip.unpack!({ path: '/tmp/a.zip', url: '', options: {}, passwords: ['infected'] }).argv.slice(-4), ['/tmp/a.zip', '/tmp/unpacked', '', 'infected']);
    assert.deepEqual(zip.unpack!({ path: '/tmp/a.zip', url: '', options: { password: 'pw' }, passwords: ['infected'] }).argv.slice(-3), ['/tmp/a.zip', '/tmp/unpacked', 'pw']);
  });
});

describe('machine ids and locks', () => {
  it('name machines after their task, uniquely, within 8 characters', () => {
    const ids = new Set(Array.from({ length: 50 }, () => machineId(42)));
    assert.equal(ids.size, 50);
    for (const id of ids) {
      assert.match(id, /^16_[0-9a-f]{5}$/);
      assert.ok(isMachineId(id));
    }
    assert.equal(machineId(2 ** 40).length, 8);
    assert.ok(!isMachineId('dev') && !isMachineId('../etc'));
  });

  it('map the machine ids onto the host range, unknown ids onto its nobody', () => {
    const range = machineIdRange(0x70000000);
    assert.deepEqual(range, { base: 1879048192, count: 65536 });
    assert.equal(hostIdOf(range, 0), 1879048192);
    assert.equal(hostIdOf(range, 1000), 1879049192);
    assert.equal(hostIdOf(range, 65535), 1879048192 + 65535);
    assert.equal(hostIdOf(range, 70000), 1879048192 + 65534);
  });

  it('refuse a machine id range that a host user, group or subordinate range uses', async () => {
    const etc = mkdtempSync(join(tmpdir(), 'nestbox-etc-'));
    const write = (name: string, text: string) => writeFileSync(join(etc, name), text);
    write('passwd', 'root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000::/home/alice:/bin/sh\n');
    write('group', 'root:x:0:\n');
    write('subuid', 'alice:100000:65536\n');
    write('subgid', 'alice:100000:65536\n');
    await checkRangeIsFree(machineIdRange(0x70000000), etc);
    await assert.rejects(checkRangeIsFree(machineIdRange(131072), etc), /overlap alice's ids 100000-165535 in .*subuid/);
    write('group', 'root:x:0:\nbig:x:1879113000:\n');
    await assert.rejects(checkRangeIsFree(machineIdRange(0x70000000), etc), /overlap big's ids 1879113000-1879113000 in .*group/);
  });

  it('lock a file exclusively across holders, and release it', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'nestbox-lock-')), '.lock');
    const first = await lockFile(path);
    let secondHeld = false;
    const second = lockFile(path).then((lock) => {
      secondHeld = true;
      return lock;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(secondHeld, false);
    await first.release();
    await (await second).release();
    assert.equal(secondHeld, true);
  });
});

describe('machinery registry', () => {
  const config = configSchema.parse({});
  const log = pino({ level: 'silent' });

  it('makes the linux machinery and one instance per kind for the scheduler', async () => {
    assert.ok(machineryKinds().includes('linux'));
    const linux = await createMachinery('linux', config, log);
    assert.equal(linux.kind, 'linux');
    const resolve = await machineryResolver(config, log);
    assert.equal(resolve('linux'), resolve('linux'));
  });

  it('refuses an unknown kind as a configuration error', async () => {
    await assert.rejects(createMachinery('vmware', config, log), (error: unknown) => isNestboxError(error, 'invalid_config') && /vmware/.test(error.message));
    const resolve = await machineryResolver(config, log);
    assert.throws(() => resolve('vmware'), (error: unknown) => isNestboxError(error, 'invalid_config') && /vmware/.test(error.message));
  });

  it('describes each kind once, for the configuration and the scheduler alike', () => {
    assert.deepEqual(machineryKinds(), [...MACHINE_KINDS]);
  });
});

describe('screen grab decoding', () => {
  /** An xwd file as Xvfb's 24-bit screens give it: ZPixmap, 32 bits per pixel, little-endian pixels. */
  function xwd(width: number, height: number, pixels: number[], overrides: Record<number, number> = {}): Buffer {
    const header = Buffer.alloc(100 + 4);
    const fields: Record<number, number> = { 0: 104, 1: 7, 2: 2, 3: 24, 4: width, 5: height, 7: 0, 11: 32, 12: width * 4, 14: 0xff0000, 15: 0xff00, 16: 0xff, 19: 0, ...overrides };
    for (const [index, value] of Object.entries(fields)) header.writeUInt32BE(value, Number(index) * 4);
    const body = Buffer.alloc(width * height * 4);
    pixels.forEach((pixel, index) => body.writeUInt32LE(pixel, index * 4));
    return Buffer.concat([header, body]);
  }

  it('turns a TrueColor grab into a PPM', () => {
    const { width, height, ppm } = decodeXwd(xwd(2, 1, [0xff0000, 0x0080ff]));
    assert.deepEqual([width, height], [2, 1]);
    assert.equal(ppm.subarray(0, 11).toString(), 'P6\n2 1\n255\n');
    assert.deepEqual([...ppm.subarray(11)], [255, 0, 0, 0, 128, 255]);
  });

  it('reads a grab of 24 bits per pixel, packed in lines as long as 32 would take (Xvfb once Wine drew on it)', () => {
    const packed = xwd(2, 2, [], { 11: 24 });
    // Two lines of 8 bytes: two 3-byte pixels each, then padding.
    Buffer.from([0x00, 0x00, 0xff, 0xff, 0x80, 0x00, 0x11, 0x11, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x22, 0x22]).copy(packed, 104);
    assert.deepEqual([...decodeXwd(packed).ppm.subarray(11)], [255, 0, 0, 0, 128, 255, 255, 255, 255, 0, 0, 0]);
  });

  it('refuses grabs a hostile X server could send', () => {
    assert.throws(() => decodeXwd(Buffer.alloc(10)), /too short/);
    assert.throws(() => decodeXwd(xwd(2, 1, [0, 0], { 4: 100000 })), /unlikely screen size/);
    assert.throws(() => decodeXwd(xwd(2, 1, [0, 0], { 5: 2 })), /shorter than its header/);
    assert.throws(() => decodeXwd(xwd(2, 1, [0, 0], { 11: 8 })), /unsupported/);
    assert.throws(() => decodeXwd(xwd(2, 1, [0, 0], { 0: 2 ** 31 })), /shorter than its header|inconsistent/);
  });
});

describe('linux machine settings', () => {
  it('are documented in the configuration template with their defaults', () => {
    const template = configTemplate('token');
    const block = template.slice(template.indexOf('# Settings of kind linux'));
    const documented = Object.fromEntries(
      [...block.matchAll(/^ {4}# {3}(\w+): (\S+)/gm)].map(([, key, value]) => [key, JSON.parse(/^[\d.]+$|^true$|^false$/.test(value!) ? value! : JSON.stringify(value))]),
    );
    assert.deepEqual(documented, linuxSettingsSchema.parse({}));
  });
});
