import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { windowsSummary } from '../../src/processing/windows-summary.js';
import { RelayDecoder, type WindowsCall } from '../../src/report/wine-calls.js';
import { parseRelayLine } from '../../src/report/wine-relay-line.js';
import { commandLineOf, executedFileOf } from '../../src/signatures/helpers/windows-commands.js';

/**
 * ShellExecuteExW passes what to run in a SHELLEXECUTEINFOW, of which relay prints only the pointer; Wine's
 * `+exec` channel prints the structure's strings inside the call. The fixture is real: Debian's wine64 8.0
 * running test/fixtures/windows/shell-execute.c (64-bit) with the machine's channels and relay lists, cut
 * to the sample's own process (test/fixtures/wine/README.md).
 */

const FIXTURE = join(import.meta.dirname, '../../../test/fixtures/wine/shell-execute64-relay.log');
const PARAMETERS = '/c echo started by ShellExecuteExW> shell-execute-ran.txt';

function decodeFixture(): { calls: WindowsCall[]; decoder: RelayDecoder } {
  const decoder = new RelayDecoder();
  const calls: WindowsCall[] = [];
  for (const line of readFileSync(FIXTURE, 'utf8').split('\n')) calls.push(...decoder.line(line));
  calls.push(...decoder.unfinished());
  return { calls, decoder };
}

function shellExecuteEx(calls: WindowsCall[]): WindowsCall {
  const found = calls.filter((call) => call.api === 'ShellExecuteExW');
  assert.equal(found.length, 1, 'one ShellExecuteExW call');
  return found[0]!;
}

describe("ShellExecuteEx's SHELLEXECUTEINFO from Wine's +exec channel", () => {
  it('reads the SHELL_execute line: mask, verb, file, parameters, directory and show; NULL strings and cut ones', () => {
    const line = parseRelayLine(
      '73314.351:0108:010c:trace:exec:SHELL_execute mask=0x00000440 hwnd=0000000000000000 verb=L"open" file=L"C:\\\\a b\\\\x.exe" parm=L"say \\"hi\\" dir=L\\"x\\""... dir=(null) show=0x00000005 class=not used',
    );
    assert.deepEqual(line, {
      kind: 'shell-execute', mask: '0x00000440', verb: 'open', file: 'C:\\a b\\x.exe', parameters: 'say "hi" dir=L"x"', directory: undefined, show: '0x00000005',
      tick: 73314.351, winpid: 0x108, wintid: 0x10c,
    });
    const nothing = parseRelayLine('73314.351:0108:010c:trace:exec:SHELL_execute mask=0x00000440 hwnd=(nil) verb=(null) file=(null) parm=(null) dir=(null) show=0x00000001 class=not used');
    assert.equal(nothing?.kind, 'shell-execute');
    assert.equal(nothing?.kind === 'shell-execute' && nothing.file, undefined);
  });

  it("leaves shell32's other exec traces and malformed lines alone", () => {
    for (const text of [
      '73314.352:0108:010c:trace:exec:SHELL_execute execute:L"cmd.exe",L"/c echo",L""',
      '73314.352:0108:010c:trace:exec:SHELL_execute mask=0x00000440 verb=L"open"',
      '73314.352:0108:010c:trace:exec:SHELL_execute mask=L"x" hwnd=0 verb=(null) file=(null) parm=(null) dir=(null) show=0x0',
    ]) {
      assert.equal(parseRelayLine(text)?.kind, 'other', text);
    }
  });

  it('gives the real call the file, parameters and verb it was asked to run, and the process it started', () => {
    const { calls, decoder } = decodeFixture();
    const call = shellExecuteEx(calls);
    assert.equal(call.module, 'shell32');
    assert.equal(call.category, 'process');
    assert.equal(call.status, true);
    assert.deepEqual(call.args, {
      pExecInfo: '0x0021fcd0', fMask: '0x00000440', lpVerb: 'open', lpFile: 'cmd.exe', lpParameters: PARAMETERS, lpDirectory: '0x0', nShow: '0x00000000',
      process_identifier: 0x110,
    });
    assert.equal(decoder.imageOf(0x110), 'C:\\windows\\system32\\cmd.exe');
    assert.equal(decoder.creatorOf(0x110), 0x108);
  });

  it('puts its command line in the summary and in what the signatures read as a started program', () => {
    const call = shellExecuteEx(decodeFixture().calls);
    assert.deepEqual(windowsSummary(call), [['command_line', `cmd.exe ${PARAMETERS}`]]);
    assert.equal(commandLineOf(call), `cmd.exe ${PARAMETERS}`);
    assert.equal(executedFileOf(call), 'cmd.exe');
  });

  it('keeps the first SHELL_execute of the call: one Wine makes inside it for another file does not replace it', () => {
    const decoder = new RelayDecoder();
    const lines = [
      '1.000:0020:0024:Call shell32.ShellExecuteExW(0021fcd0) ret=1400015b1',
      '1.001:0020:0024:trace:exec:SHELL_execute mask=0x00000000 hwnd=0 verb=(null) file=L"http://x.test/a" parm=(null) dir=(null) show=0x00000001 class=not used',
      '1.002:0020:0024:trace:exec:SHELL_execute mask=0x00000000 hwnd=0 verb=L"open" file=L"winebrowser" parm=L"http://x.test/a" dir=(null) show=0x00000001 class=not used',
      '1.003:0020:0024:Ret  shell32.ShellExecuteExW() retval=00000001 ret=1400015b1',
    ];
    const [call] = lines.flatMap((line) => decoder.line(line));
    assert.equal(call?.args.lpFile, 'http://x.test/a');
    assert.equal(call?.args.lpVerb, '0x0');
    assert.equal(call?.args.process_identifier, undefined, 'no process was seen starting');
  });
});
