import { Binary, Int32, serialize } from 'bson';

/**
 * A TEST DOUBLE of Cuckoo 2.0.7's Windows monitor (the DLL Cuckoo injects into a guest's processes): it
 * writes a process's behaviour log the way the monitor's log.c does, because no Windows guest (and so no
 * real monitor) can run here. Its protocol, as the monitor writes it:
 * - the result server connection opens with `BSON <pid>\n` (`header()`), then BSON documents follow;
 * - the first document of a log explains `__process__` and the second is that message (FILETIME halves,
 *   pid, ppid, module path, command line, is_64bit, track, modules);
 * - before an API's first call an `info` document gives its index, name, category and value names
 *   (`is_success`, `retval`, then the arguments; a pointer as `[name, "p"]`, a hex value as `[name, "x"]`);
 * - a call is `{I, T, t, h, args}` with `e`/`E` when it failed; `t` counts milliseconds from the
 *   process's start; pointers and return values are 32-bit in a 32-bit process, 64-bit in a 64-bit one.
 */

/** An argument of a call: its name, value and kind (`s` a string, `i` a 32-bit value, `p` a pointer, `x` hex, `b` bytes). */
export type MonitorArg = [name: string, value: string | number | bigint | Buffer, kind?: 's' | 'i' | 'p' | 'x' | 'b'];

export interface MonitorProcess {
  pid: number;
  ppid: number;
  modulePath: string;
  commandLine: string;
  /** The process's start, Unix milliseconds. */
  startMs: number;
  is64bit?: boolean;
  modules?: Array<{ basename: string; filepath: string; baseaddr: string; imgsize: number }>;
}

export interface CallOptions {
  /** Milliseconds since the process started. */
  t: number;
  tid?: number;
  ok?: boolean;
  ret?: number | bigint;
  category?: string;
}

const SPECIAL = new Map([['__process__', 'time_low time_high pid ppid module_path command_line is_64bit track modules'], ['__anomaly__', 'tid subcategory function_name message']]);

export class MonitorLogWriter {
  readonly #documents: Uint8Array[] = [];
  readonly #indexes = new Map<string, number>();
  readonly #is64bit: boolean;

  constructor(readonly process: MonitorProcess) {
    this.#is64bit = process.is64bit ?? false;
    const filetime = (BigInt(process.startMs) * 10_000n) + 116444736000000000n;
    this.#log('__process__', '__notification__', [
      ['time_low', Number(BigInt.asIntN(32, filetime & 0xffffffffn)), 'i'],
      ['time_high', Number(filetime >> 32n), 'i'],
      ['pid', process.pid, 'i'],
      ['ppid', process.ppid, 'i'],
      ['module_path', process.modulePath],
      ['command_line', process.commandLine],
      ['is_64bit', this.#is64bit ? 1 : 0, 'i'],
      ['track', 1, 'i'],
    ], { t: 0 }, process.modules ?? [{ basename: 'ntdll.dll', filepath: 'C:\\Windows\\SYSTEM32\\ntdll.dll', baseaddr: '0x77a00000', imgsize: 1200128 }]);
  }

  /** The line that opens the log's result server connection. */
  header(): Buffer {
    return Buffer.from(`BSON ${this.process.pid}\n`);
  }

  call(api: string, args: MonitorArg[], options: CallOptions): this {
    this.#log(api, options.category ?? 'misc', args, options);
    return this;
  }

  anomaly(subcategory: string, functionName: string, message: string, t: number): this {
    this.#log('__anomaly__', '__notification__', [['tid', 1, 'i'], ['subcategory', subcategory], ['function_name', functionName], ['message', message]], { t });
    return this;
  }

  /** Any document as it is (a test of what the monitor never writes). */
  raw(document: Record<string, unknown>): this {
    this.#documents.push(serialize(document));
    return this;
  }

  /** The log as the result server keeps it (logs/<pid>.bson). */
  bytes(): Buffer {
    return Buffer.concat(this.#documents);
  }

  #log(api: string, category: string, args: MonitorArg[], options: CallOptions, modules?: unknown[]): void {
    let index = this.#indexes.get(api);
    if (index === undefined) {
      index = this.#indexes.size;
      this.#indexes.set(api, index);
      const names = SPECIAL.get(api)?.split(' ') ?? args.map(([name]) => name);
      const described = names.map((name) => {
        const kind = args.find(([argName]) => argName === name)?.[2];
        return kind === 'p' || kind === 'x' ? [name, kind] : name;
      });
      this.#documents.push(serialize({ I: new Int32(index), name: api, type: 'info', category, args: ['is_success', 'retval', ...described], flags_value: {}, flags_bitmask: {} }));
    }
    const ok = options.ok ?? true;
    const values: unknown[] = [new Int32(ok ? 1 : 0), this.#returnValue(options.ret ?? (ok ? 1 : 0)), ...args.map((arg) => this.#value(arg))];
    if (modules) values.push(modules);
    const failure = ok ? {} : { e: new Int32(2), E: new Int32(-1073741772) };
    this.#documents.push(serialize({ I: new Int32(index), T: new Int32(options.tid ?? 1), t: new Int32(options.t), h: 0n, ...failure, args: values }));
  }

  #value([, value, kind]: MonitorArg): unknown {
    if (Buffer.isBuffer(value)) return new Binary(value);
    if (typeof value === 'string') return value;
    if (kind === 'p') return this.#pointer(value);
    return new Int32(Number(value));
  }

  /** An intptr_t as the monitor appends it: an int64 in a 64-bit process, else an int32. */
  #pointer(value: number | bigint): unknown {
    return this.#is64bit ? BigInt(value) : new Int32(Number(BigInt.asIntN(32, BigInt(value))));
  }

  /** The return value, a uintptr_t the monitor appends as a long: a 32-bit process's never negative. */
  #returnValue(value: number | bigint): bigint {
    return this.#is64bit ? BigInt(value) : BigInt.asUintN(32, BigInt(value));
  }
}
