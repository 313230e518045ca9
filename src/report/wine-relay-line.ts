/**
 * The syntax of one line of Wine's debug output as the machine records it (`logs/wine/relay.log`, channels
 * `+timestamp`, `+pid`, `+relay`, `+reg`, `+process`, `+exec`): `<ticks>:<winpid>:<wintid>:<message>`, the ticks in
 * seconds with milliseconds. Only the messages processing reads are told apart; the rest are `other`.
 */

export type RelayLine = { tick: number; winpid: number; wintid: number } & RelayMessage;

export type RelayMessage =
  /** `Call KERNEL32.CreateFileW(0021faa0 L"C:\\x",40000000,...) ret=14000165e` */
  | { kind: 'call'; module: string; api: string; args: RelayArg[] }
  /** `Ret  KERNEL32.CreateFileW() retval=0000003c ret=14000165e` */
  | { kind: 'ret'; module: string; api: string; retval: string }
  /** `trace:reg:NtOpenKeyEx (0x1c,L"Software\\x",20019,0x21f390)`: a key about to be opened or created. */
  | { kind: 'key-request'; root: string; name: string }
  /** `trace:reg:NtOpenKeyEx <- 0x3c`: the handle it was given (`(nil)` when it failed: then undefined). */
  | { kind: 'key-handle'; handle: string | undefined }
  /** `trace:process:NtCreateUserProcess L"\\??\\C:\\x.exe" pid 0160 tid 0164 handles 0x88/0x8c` */
  | { kind: 'process-created'; image: string; childWinpid: number; processHandle: string; threadHandle: string }
  /**
   * `trace:exec:SHELL_execute mask=0x00000440 hwnd=0000000000000000 verb=L"open" file=L"cmd.exe" parm=L"/c x"
   * dir=(null) show=0x00000000 class=not used` (channel `+exec`): what a ShellExecute* call was asked to run,
   * the members of ShellExecuteEx's SHELLEXECUTEINFO that relay shows only a pointer to. Strings are
   * undefined where Wine printed `(null)`; mask and show are hex as printed.
   */
  | { kind: 'shell-execute'; mask: string; verb?: string; file?: string; parameters?: string; directory?: string; show: string }
  | { kind: 'other' };

/** One argument as relay printed it: its value in hex, and the string it points to when Wine showed one. */
export interface RelayArg {
  hex: string;
  text?: string;
}

const HEADER = /^\d+\.\d{3}:[0-9a-f]+:[0-9a-f]+:$/;
const CALL = /^Call ([\w.-]+)\.(\w+)\(/;
const RET = /^Ret {2}([\w.-]+)\.(\w+)\(\) retval=([0-9a-f]+)/;
const KEY_CALL = /^trace:reg:(NtCreateKey|NtOpenKeyEx|NtOpenKey|NtCreateKeyTransacted|NtOpenKeyTransactedEx) (.*)$/;
const CREATED = /^trace:process:NtCreateUserProcess (L".*") pid ([0-9a-f]+) tid [0-9a-f]+ handles (\S+)\/(\S+)$/;
const SHELL_EXECUTE = 'trace:exec:SHELL_execute ';

export function parseRelayLine(line: string): RelayLine | undefined {
  // By hand rather than by one regular expression: this runs for each of a million lines.
  const pid = line.indexOf(':');
  const tid = line.indexOf(':', pid + 1);
  const end = line.indexOf(':', tid + 1);
  if (pid < 5 || end < 0 || line.charCodeAt(pid - 4) !== 0x2e) return undefined;
  const tick = Number(line.slice(0, pid));
  const winpid = parseInt(line.slice(pid + 1, tid), 16);
  const wintid = parseInt(line.slice(tid + 1, end), 16);
  if (Number.isNaN(tick) || Number.isNaN(winpid) || Number.isNaN(wintid) || !HEADER.test(line.slice(0, end + 1))) return undefined;
  const message = messageOf(line.slice(end + 1)) as RelayLine;
  message.tick = tick;
  message.winpid = winpid;
  message.wintid = wintid;
  return message;
}

function messageOf(message: string): RelayMessage {
  if (message.startsWith('Call ')) return callOf(message);
  if (message.startsWith('Ret ')) {
    const ret = RET.exec(message);
    return ret ? { kind: 'ret', module: ret[1]!, api: ret[2]!, retval: ret[3]! } : { kind: 'other' };
  }
  if (message.startsWith('trace:reg:')) return keyMessageOf(message);
  if (message.startsWith('trace:process:NtCreateUserProcess ')) return createdOf(message);
  if (message.startsWith(SHELL_EXECUTE)) return shellExecuteOf(message.slice(SHELL_EXECUTE.length));
  return { kind: 'other' };
}

function callOf(message: string): RelayMessage {
  const call = CALL.exec(message);
  // Wine's own entry points (`Call PE DLL (...)`, `Call TLS callback (...)`) are no API call.
  if (!call) return { kind: 'other' };
  const end = message.lastIndexOf(') ret=');
  if (end < call[0].length - 1) return { kind: 'other' };
  return { kind: 'call', module: call[1]!, api: call[2]!, args: relayArgs(message.slice(call[0].length, end)) };
}

function keyMessageOf(message: string): RelayMessage {
  const call = KEY_CALL.exec(message);
  if (!call) return { kind: 'other' };
  const rest = call[2]!;
  if (rest.startsWith('<- ')) {
    const handle = rest.slice(3).trim();
    return { kind: 'key-handle', handle: handle === '(nil)' || handle === '0' ? undefined : normalHandle(handle) };
  }
  if (!rest.startsWith('(')) return { kind: 'other' };
  const [root, name] = relayArgs(rest.slice(1));
  if (!root || name?.text === undefined) return { kind: 'other' };
  return { kind: 'key-request', root: root.hex === '(nil)' ? '0' : normalHandle(root.hex), name: name.text };
}

function createdOf(message: string): RelayMessage {
  const created = CREATED.exec(message);
  if (!created) return { kind: 'other' };
  const [image] = relayArgs(`0 ${created[1]!}`);
  return {
    kind: 'process-created',
    image: (image?.text ?? '').replace(/^\\\?\?\\/, ''),
    childWinpid: parseInt(created[2]!, 16),
    processHandle: normalHandle(created[3]!),
    threadHandle: normalHandle(created[4]!),
  };
}

/** SHELL_execute's fields, in the order Wine prints them (dlls/shell32/shlexec.c); anything else is no such line. */
const SHELL_FIELDS = ['mask', 'hwnd', 'verb', 'file', 'parm', 'dir', 'show'] as const;

function shellExecuteOf(text: string): RelayMessage {
  const fields: Partial<Record<(typeof SHELL_FIELDS)[number], RelayArg>> = {};
  let i = 0;
  for (const name of SHELL_FIELDS) {
    if (!text.startsWith(`${name}=`, i)) return { kind: 'other' };
    const [value, end] = fieldValue(text, i + name.length + 1);
    fields[name] = value;
    i = end + 1;
  }
  const hex = (arg: RelayArg | undefined) => /^0x[0-9a-f]+$/i.test(arg?.hex ?? '') && arg?.text === undefined;
  if (!hex(fields.mask) || !hex(fields.show)) return { kind: 'other' };
  return {
    kind: 'shell-execute',
    mask: fields.mask!.hex,
    verb: fields.verb?.text,
    file: fields.file?.text,
    parameters: fields.parm?.text,
    directory: fields.dir?.text,
    show: fields.show!.hex,
  };
}

/** One `name=value` value from its start: a string as Wine printed it (perhaps cut, `...`), or a word. */
function fieldValue(text: string, at: number): [RelayArg, number] {
  if (!isStringStart(text, at)) {
    const end = text.indexOf(' ', at);
    const stop = end < 0 ? text.length : end;
    return [{ hex: text.slice(at, stop) }, stop];
  }
  const [value, end] = quoted(text, at + (text[at] === 'L' ? 2 : 1));
  return [{ hex: '', text: value }, text.startsWith('...', end) ? end + 3 : end];
}

/** A handle or pointer as lower-case hex without `0x` or leading zeros, so that both spellings meet. */
export function normalHandle(text: string): string {
  const hex = text.toLowerCase().replace(/^0x/, '').replace(/^0+(?=.)/, '');
  return hex;
}

/**
 * The arguments of a relay line: comma-separated hex values, each perhaps followed by the string it points
 * to (`0021faa0 L"C:\\x"`, `14000a0be "text"`, a long one cut short with `...` after the quote).
 */
export function relayArgs(text: string): RelayArg[] {
  const args: RelayArg[] = [];
  let i = 0;
  while (i < text.length) {
    const start = i;
    if (text.startsWith('(nil)', i)) i += 5;
    while (i < text.length && text[i] !== ',' && text[i] !== ' ' && text[i] !== ')' && !isStringStart(text, i)) i++;
    const arg: RelayArg = { hex: text.slice(start, i) };
    if (text[i] === ' ') i++;
    if (isStringStart(text, i)) {
      if (text[i] === 'L') i++;
      const [value, end] = quoted(text, i + 1);
      arg.text = value;
      i = end;
      if (text.startsWith('...', i)) i += 3;
    }
    args.push(arg);
    // On to the next argument: past anything Wine added (a size after `=`) up to the comma.
    while (i < text.length && text[i] !== ',') {
      if (text[i] === ')') return args;
      i++;
    }
    i++;
  }
  return args;
}

function isStringStart(text: string, at: number): boolean {
  return text[at] === '"' || (text[at] === 'L' && text[at + 1] === '"');
}

/** The text of a string Wine printed with C escapes, from just after its opening quote; and where it ends. */
function quoted(text: string, from: number): [string, number] {
  let value = '';
  let i = from;
  while (i < text.length && text[i] !== '"') {
    if (text[i] !== '\\' || i + 1 >= text.length) {
      value += text[i++];
      continue;
    }
    const [char, length] = escaped(text, i + 1);
    value += char;
    i += 1 + length;
  }
  return [value, i + 1];
}

const SIMPLE_ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', '\\': '\\', '"': '"', "'": "'" };

function escaped(text: string, at: number): [string, number] {
  const next = text[at]!;
  if (next in SIMPLE_ESCAPES) return [SIMPLE_ESCAPES[next]!, 1];
  const hex = /^(?:x([0-9a-fA-F]{4}|[0-9a-fA-F]{2})|u([0-9a-fA-F]{4}))/.exec(text.slice(at, at + 5));
  if (hex) return [String.fromCharCode(parseInt(hex[1] ?? hex[2]!, 16)), hex[0].length];
  const octal = /^[0-7]{1,3}/.exec(text.slice(at, at + 3));
  if (octal) return [String.fromCharCode(parseInt(octal[0], 8)), octal[0].length];
  return [next, 1];
}
