import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { staticModule } from '../../src/processing/modules/static.js';
import { targetModule } from '../../src/processing/modules/target.js';
import { yaraModule } from '../../src/processing/modules/yara.js';
import type { ProcessingInput } from '../../src/processing/types.js';
import { SHIPPED_RULES_DIR, YaraScanner } from '../../src/processing/yara.js';
import type { Report, SignatureMatch, YaraMatch } from '../../src/report/report-types.js';
import { techniqueOf } from '../../src/signatures/attack.js';
import { runSignatures, scoreOf, SIGNATURES } from '../../src/signatures/index.js';
import { ruleSeverity, StaticRuleSignature } from '../../src/signatures/static-rule-signature.js';
import { FileTypeDetector } from '../../src/storage/filetype.js';
import { taskRow } from '../helpers/tasks.js';
import { baseReport, makeAnalysis, runScenario } from '../helpers/signatures.js';
import { corpusRoot, corpusSample } from '../helpers/corpus.js';

/**
 * Static capability rules (rules/yara/capabilities-*.yar, crypto.yar, packers.yar) and the signatures they
 * feed, on the corpus's PE and ELF samples (built by scripts/build-corpus.sh): the real processing modules (target, static, yara
 * with the shipped rules) make the report sections, then every shipped signature runs on them.
 */

const SAMPLES = ['malicious/pe-injector', 'malicious/pe-keylogger', 'malicious/pe-dropper', 'malicious/elf-implant', 'benign/pe-hello', 'benign/pe-desktop-tool'];
/** An ordinary ELF built by gcc: the program that only prints, compiled for Linux. */
const ELF_HELLO = 'elf:benign/pe-hello';

/** Each static rule: a sample it must match and one it must not (the near miss where there is one). */
const RULE_CASES: Array<{ rule: string; matches: string; not: string }> = [
  { rule: 'pe_remote_thread_injection', matches: 'malicious/pe-injector', not: 'benign/pe-desktop-tool' },
  { rule: 'pe_process_hollowing', matches: 'malicious/pe-injector', not: 'benign/pe-hello' },
  { rule: 'pe_apc_injection', matches: 'malicious/pe-injector', not: 'malicious/pe-keylogger' },
  { rule: 'pe_registry_run_key', matches: 'malicious/pe-keylogger', not: 'benign/pe-desktop-tool' },
  { rule: 'pe_service_install', matches: 'malicious/pe-dropper', not: 'malicious/pe-keylogger' },
  { rule: 'pe_keyboard_hook', matches: 'malicious/pe-keylogger', not: 'benign/pe-desktop-tool' },
  { rule: 'pe_key_polling', matches: 'malicious/pe-keylogger', not: 'benign/pe-desktop-tool' },
  { rule: 'pe_debugger_checks', matches: 'malicious/pe-injector', not: 'benign/pe-desktop-tool' },
  { rule: 'pe_http_client', matches: 'malicious/pe-dropper', not: 'benign/pe-hello' },
  { rule: 'pe_socket_client', matches: 'malicious/pe-dropper', not: 'benign/pe-hello' },
  { rule: 'pe_download_to_file', matches: 'malicious/pe-dropper', not: 'benign/pe-hello' },
  { rule: 'pe_download_execute', matches: 'malicious/pe-dropper', not: 'benign/pe-desktop-tool' },
  { rule: 'pe_writable_code_section', matches: 'malicious/pe-injector', not: 'benign/pe-hello' },
  { rule: 'elf_ptrace_traceme', matches: 'malicious/elf-implant', not: ELF_HELLO },
  { rule: 'elf_ptrace_injection', matches: 'malicious/elf-implant', not: ELF_HELLO },
  { rule: 'elf_hardcoded_connect', matches: 'malicious/elf-implant', not: ELF_HELLO },
  { rule: 'crypto_aes_sbox', matches: 'malicious/pe-keylogger', not: 'benign/pe-hello' },
  { rule: 'crypto_sha256_constants', matches: 'malicious/pe-dropper', not: ELF_HELLO },
  { rule: 'crypto_chacha_salsa', matches: 'malicious/elf-implant', not: ELF_HELLO },
  { rule: 'crypto_rc4_ksa', matches: 'malicious/pe-keylogger', not: 'malicious/pe-dropper' },
];

/** Each signature fed by static rules: where it must match and where not. */
const SIGNATURE_CASES: Array<{ signature: string; matches: string; not: string }> = [
  { signature: 'static_pe_injection', matches: 'malicious/pe-injector', not: 'benign/pe-desktop-tool' },
  { signature: 'static_elf_injection', matches: 'malicious/elf-implant', not: ELF_HELLO },
  { signature: 'static_persistence', matches: 'malicious/pe-keylogger', not: 'benign/pe-desktop-tool' },
  { signature: 'static_keylogger', matches: 'malicious/pe-keylogger', not: 'benign/pe-desktop-tool' },
  { signature: 'static_antidebug', matches: 'malicious/elf-implant', not: 'benign/pe-desktop-tool' },
  { signature: 'static_crypto_constants', matches: 'malicious/pe-dropper', not: 'benign/pe-hello' },
  { signature: 'static_network_apis', matches: 'malicious/pe-dropper', not: ELF_HELLO },
  { signature: 'static_capability_combination', matches: 'malicious/pe-keylogger', not: 'benign/pe-desktop-tool' },
];

interface Analysed {
  report: Report;
  matches: SignatureMatch[];
  rules: string[];
}

describe('static capability rules and their signatures', () => {
  const work = mkdtempSync(join(tmpdir(), 'nestbox-static-rules-'));
  const fileType = new FileTypeDetector();
  const yara = new YaraScanner([SHIPPED_RULES_DIR], work);
  const analysed = new Map<string, Analysed>();

  /** The real processing modules, then every shipped signature, on one file. */
  async function analyse(binary: string, name: string): Promise<Analysed> {
    const analysis = makeAnalysis();
    try {
      const input = {
        task: taskRow({ target: `/tmp/${name}`, category: 'file' }),
        binaryPath: binary,
        paths: analysis.paths,
        tools: { fileType, yara },
      } as unknown as ProcessingInput;
      const target = await targetModule.run(input);
      const staticSection = await staticModule.run(input);
      const yaraSection = await yaraModule.run(input);
      const report = baseReport(analysis.paths.binary, { target, static: staticSection, ...(yaraSection ? { yara: yaraSection } : {}) } as Partial<Report>);
      const matches = await runSignatures(report, analysis.paths);
      return { report, matches, rules: (report.target.file?.yara ?? []).map((match) => match.name) };
    } finally {
      analysis.remove();
    }
  }

  const get = (id: string): Analysed => {
    const result = analysed.get(id);
    assert.ok(result, `${id} was not analysed`);
    return result;
  };
  const named = (id: string, signature: string) => get(id).matches.find((match) => match.name === signature);

  before(async () => {
    for (const id of SAMPLES) analysed.set(id, await analyse(corpusSample(id).path, id));
    const elfHello = join(work, 'hello');
    execFileSync('gcc', ['-O1', '-w', '-static', '-o', elfHello, '-x', 'c', join(corpusRoot(), 'benign/pe-hello/sample.win.c')]);
    analysed.set(ELF_HELLO, await analyse(elfHello, 'hello'));
    assert.deepEqual(yara.problems, []);
  });
  after(async () => {
    fileType.close();
    await yara.close();
    rmSync(work, { recursive: true, force: true });
  });

  for (const { rule, matches, not } of RULE_CASES) {
    it(`rule ${rule} matches ${matches} and not ${not}`, () => {
      assert.ok(get(matches).rules.includes(rule), `${matches} matched ${get(matches).rules.join(', ')}`);
      assert.ok(!get(not).rules.includes(rule), `${not} matched ${rule}`);
    });
  }

  for (const { signature, matches, not } of SIGNATURE_CASES) {
    it(`signature ${signature} fires on ${matches}, with each rule that fed it as a mark, and not on ${not}`, () => {
      const match = named(matches, signature);
      assert.ok(match, `${signature} did not fire on ${matches}: ${get(matches).matches.map((m) => m.name).join(', ')}`);
      assert.ok(match.marks.length > 0 && match.marks.length === match.markcount);
      assert.equal(named(not, signature), undefined, `${signature} fired on ${not}`);
    });
  }

  it('fires what each corpus sample says must fire and nothing it says must not; malicious ones score at least 5, benign ones at most 1', () => {
    for (const id of SAMPLES) {
      const { label } = corpusSample(id);
      const names = get(id).matches.map((match) => match.name);
      for (const name of label.must_fire) assert.ok(names.includes(name), `${id}: ${name} did not fire (${names.join(', ')})`);
      for (const name of label.must_not_fire) assert.ok(!names.includes(name), `${id}: ${name} fired`);
      const score = scoreOf(get(id).matches);
      if (label.verdict === 'malicious') assert.ok(score >= 5, `${id} scored ${score}`);
      else assert.ok(score <= 1, `${id} scored ${score}`);
      const techniques = new Set(get(id).matches.flatMap((match) => Object.keys(match.ttp)));
      for (const technique of label.attack) assert.ok(techniques.has(technique), `${id}: ${technique} not reported`);
    }
  });

  it('finds nothing in an ordinary program: the PE that only prints and the same program built by gcc score 0', () => {
    for (const id of ['benign/pe-hello', ELF_HELLO, 'benign/pe-desktop-tool']) {
      assert.deepEqual(get(id).rules, [], id);
      assert.deepEqual(get(id).matches.map((match) => match.name), [], id);
    }
  });

  it("reports the issue's example: a PE32+ that imports only OpenProcess, VirtualAllocEx, WriteProcessMemory and CreateRemoteThread", async () => {
    const source = join(work, 'quartet.c');
    writeFileSync(
      source,
      `#include <windows.h>
int main(int argc, char **argv) {
  if (argc < 9) return 0;
  HANDLE p = OpenProcess(PROCESS_ALL_ACCESS, FALSE, GetCurrentProcessId());
  void *m = VirtualAllocEx(p, NULL, 1, MEM_COMMIT, PAGE_EXECUTE_READWRITE);
  WriteProcessMemory(p, m, "\\xc3", 1, NULL);
  return CreateRemoteThread(p, NULL, 0, (LPTHREAD_START_ROUTINE)m, NULL, 0, NULL) != NULL;
}
`,
    );
    const binary = join(work, 'quartet.exe');
    execFileSync('x86_64-w64-mingw32-gcc', ['-O1', '-o', binary, source]);
    const { report, matches } = await analyse(binary, 'quartet.exe');
    const imported = (report.static as { pe_imports: Array<{ imports: Array<{ name: string | null }> }> }).pe_imports.flatMap((dll) => dll.imports.map((entry) => entry.name));
    for (const api of ['OpenProcess', 'VirtualAllocEx', 'WriteProcessMemory', 'CreateRemoteThread']) assert.ok(imported.includes(api), api);
    const injection = matches.find((match) => match.name === 'static_pe_injection');
    assert.ok(injection, matches.map((match) => match.name).join(', '));
    assert.equal(injection.severity, 2, 'a capability read from imports alone is suspicious, no more');
    assert.deepEqual(injection.marks, [{ type: 'ioc', category: 'yara', ioc: 'pe_remote_thread_injection', description: 'Opens another process, allocates and writes memory in it and starts a thread there' }]);
    assert.deepEqual(Object.keys(injection.ttp).sort(), ['T1055', 'T1055.002'], 'only the techniques of the rule that matched');
    assert.equal(scoreOf(matches), 0.5, 'one capability alone is suspicious, not a verdict');
  });

  it('gives a signature the severity and techniques of the rules that fed it', () => {
    assert.equal(named('malicious/pe-dropper', 'static_network_apis')?.severity, 2, 'a downloader that can run what it fetched (strength 3, reported at most suspicious)');
    assert.equal(named('malicious/elf-implant', 'static_network_apis')?.severity, 1, 'sockets to a built-in address only');
    assert.deepEqual(Object.keys(named('malicious/elf-implant', 'static_network_apis')!.ttp), ['T1095']);
    const crypto = named('malicious/pe-dropper', 'static_crypto_constants')!;
    assert.deepEqual(crypto.marks.map((mark) => mark.type === 'ioc' && mark.ioc).sort(), ['crypto_chacha_salsa', 'crypto_sha256_constants']);
    const rule = (meta: Record<string, string>): YaraMatch => ({ name: 'operator_rule', meta, strings: [] });
    assert.equal(ruleSeverity(rule({ severity: '5' }), 2), 2, 'a rule never lifts its signature above the signature\'s own ceiling');
    assert.equal(ruleSeverity(rule({ severity: '1' }), 2), 1);
    assert.equal(ruleSeverity(rule({}), 3), 3);
  });

  it("fires no rule above informational on the host's programs (/usr/bin, /usr/sbin) or mingw-w64's runtime DLLs", async (t) => {
    const programs = ['/usr/bin', '/usr/sbin'].flatMap((dir) => filesIn(dir));
    const runtime = ['/usr/lib/gcc/x86_64-w64-mingw32', '/usr/x86_64-w64-mingw32/lib'].flatMap((dir) => filesIn(dir, true).filter((file) => /\.(dll|exe)$/i.test(file)));
    assert.ok(programs.length > 100 && runtime.length > 0, `${programs.length} programs, ${runtime.length} runtime files`);
    const results = await yara.scanMany([...programs, ...runtime]);
    const fed = [...results].flatMap(([path, matches]) => matches.filter((match) => match.meta.signature).map((match) => ({ path, match })));
    const severe = fed.filter(({ match }) => Number(match.meta.severity) >= 2).map(({ path, match }) => `${match.name} ${path}`);
    assert.deepEqual(severe, []);
    const byRule = new Map<string, number>();
    for (const { match } of fed) byRule.set(match.name, (byRule.get(match.name) ?? 0) + 1);
    t.diagnostic(`${programs.length + runtime.length} files scanned; informational matches: ${[...byRule].map(([rule, count]) => `${rule} ${count}`).join(', ') || 'none'}`);
  });

  it('combine a severe capability with a suspicious one, not with informational ones alone', async () => {
    const rule = (name: string, signature: string, severity: number): YaraMatch => ({ name, meta: { signature, severity: String(severity), description: name }, strings: [] });
    const injection = rule('pe_remote_thread_injection', 'static_pe_injection', 4);
    const combined = async (...rules: YaraMatch[]) => {
      const { named: find } = await runScenario({ report: (paths) => ({ target: { ...baseReport(paths.binary).target, file: { ...baseReport(paths.binary).target.file!, yara: rules } } }) });
      return find('static_capability_combination');
    };
    assert.equal(await combined(injection), undefined);
    assert.equal(await combined(injection, rule('crypto_aes_sbox', 'static_crypto_constants', 1), rule('pe_http_client', 'static_network_apis', 1)), undefined);
    const marks = (await combined(injection, rule('pe_debugger_checks', 'static_antidebug', 2)))?.marks.map((mark) => mark.type === 'ioc' && mark.ioc);
    assert.deepEqual(marks, ['static_pe_injection', 'static_antidebug']);
    assert.ok(await combined(rule('pe_service_install', 'static_persistence', 3), rule('pe_download_execute', 'static_network_apis', 3)));
    assert.equal(await combined(rule('pe_service_install', 'static_persistence', 3), rule('pe_download_to_file', 'static_network_apis', 2)), undefined);
  });

  it('ship every static rule with a description, a severity its signature allows, known techniques and a sample', () => {
    const instances = SIGNATURES.map((Signature) => new Signature());
    const infos = new Map(instances.map((signature) => [signature.info.name, signature.info]));
    // A capability's rules may claim up to its strength; other signatures fed by rules (packed_binary) up to their severity.
    const strengthOf = (name: string) => {
      const signature = instances.find((candidate) => candidate.info.name === name);
      return signature instanceof StaticRuleSignature ? signature.strength : (signature?.info.severity ?? 0);
    };
    const files = readdirSync(SHIPPED_RULES_DIR).filter((file) => file.endsWith('.yar'));
    const fed = files.flatMap((file) => rulesWithMeta(readFileSync(join(SHIPPED_RULES_DIR, file), 'utf8'))).filter((rule) => rule.meta.signature);
    assert.ok(fed.length >= RULE_CASES.length);
    for (const rule of fed) {
      const info = infos.get(rule.meta.signature!);
      assert.ok(info, `${rule.name} feeds unknown signature ${rule.meta.signature}`);
      assert.ok((rule.meta.description ?? '').length > 10, rule.name);
      const severity = Number(rule.meta.severity);
      assert.ok(Number.isInteger(severity) && severity >= 1 && severity <= strengthOf(info.name), `${rule.name}: severity ${rule.meta.severity} above ${info.name}'s strength`);
      for (const id of (rule.meta.attack ?? '').split(',').filter(Boolean)) {
        assert.ok(techniqueOf(id) && info.ttp.includes(id), `${rule.name}: technique ${id} unknown or not among ${info.name}'s`);
      }
      if (rule.name !== 'upx_packed') assert.ok(RULE_CASES.some((testCase) => testCase.rule === rule.name), `${rule.name} has no sample case`);
    }
  });
});

/** Regular files of a folder (readable ones, by their real path), optionally of its subfolders too. */
function filesIn(dir: string, recursive = false): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath ?? dir, entry.name));
}

/** Rule names and their string meta values, read from a YARA source with a pattern (the shipped rules' layout). */
function rulesWithMeta(source: string): Array<{ name: string; meta: Record<string, string> }> {
  return [...source.matchAll(/^rule (\w+)\s*\{([\s\S]*?)^\}/gm)].map(([, name, body]) => {
    const metaBlock = /meta:([\s\S]*?)(?:strings:|condition:)/.exec(body!)?.[1] ?? '';
    const meta = Object.fromEntries([...metaBlock.matchAll(/^\s*(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"/gm)].map(([, key, value]) => [key!, value!]));
    return { name: name!, meta };
  });
}

