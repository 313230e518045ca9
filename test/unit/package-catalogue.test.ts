import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { expandTemplate, packageCatalogue, packageForFile, passwordsToTry, PACKAGES } from '../../src/analysis/packages/index.js';
import { pickUnpackedFile } from '../../src/machinery/linux/unpacked.js';

/**
 * The host (src/analysis/packages) and the qemu guest's analyzer (guest/analyzer/packages.py) follow one
 * catalogue: the same files go to the same packages, the same templates give the same command lines and
 * the same archive contents give the same file to run. Each question is put to both implementations.
 */
const GUEST_ANALYZER = fileURLToPath(new URL('../../../guest/analyzer/', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'nestbox-catalogue-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs `code` in the guest's Python with the catalogue as `catalogue` and `question` parsed from JSON; prints its answer as JSON. */
function askGuest(code: string, question: unknown): unknown {
  const program = [
    'import json, sys',
    `sys.path.insert(0, ${JSON.stringify(GUEST_ANALYZER)})`,
    'import packages',
    'question = json.loads(sys.stdin.read())',
    'catalogue = packages.Catalogue(question.pop("catalogue"))',
    code,
  ].join('\n');
  const output = execFileSync('/usr/bin/python3', ['-B', '-c', program], {
    input: JSON.stringify({ catalogue: packageCatalogue(), ...(question as object) }),
    env: { ...process.env, LC_ALL: 'C' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  return JSON.parse(output.toString());
}

const TARGETS = [
  ['a.out', 'ELF 64-bit LSB pie executable, x86-64, version 1 (SYSV), dynamically linked'],
  ['s', 'POSIX shell script, ASCII text executable'],
  ['s', 'Bourne-Again shell script, ASCII text executable'],
  ['run.SH', 'ASCII text'],
  ['x', 'Python script, ASCII text executable'],
  ['tool.pyw', 'ASCII text'],
  ['x', 'Perl script text executable'],
  ['lib.pm', 'ASCII text'],
  ['index.js', 'JavaScript source, ASCII text'],
  ['x.mjs', 'ASCII text'],
  ['x', 'a /usr/bin/env node script, ASCII text executable'],
  ['b.zip', 'Zip archive data, at least v2.0 to extract, compression method=deflate'],
  ['b.tgz', 'gzip compressed data, from Unix'],
  ['b.7z', '7-zip archive data, version 0.4'],
  ['b.tar', 'POSIX tar archive (GNU)'],
  ['b.tar.xz', 'XZ compressed data, checksum CRC64'],
  ['mystery', 'data'],
] as const;

describe('the analysis package catalogue, on the host and in the guest', () => {
  it('is plain data the guest can be sent', () => {
    const catalogue = packageCatalogue();
    assert.deepEqual(JSON.parse(JSON.stringify(catalogue)), catalogue);
    assert.deepEqual(
      catalogue.map((spec) => spec.name),
      PACKAGES.map((entry) => entry.name),
    );
  });

  it('sends the same files to the same packages', () => {
    const host = TARGETS.map(([fileName, fileType]) => packageForFile({ fileName, fileType })?.name ?? null);
    const guest = askGuest(
      'print(json.dumps([(catalogue.for_file(name, kind) or {}).get("name") for name, kind in question["targets"]]))',
      { targets: TARGETS },
    );
    assert.deepEqual(guest, host);
    assert.equal(host.filter((name) => name === null).length, 1, 'only the mystery data matches no package');
  });

  it('makes the same command lines from the same templates', () => {
    const context = { path: '/tmp/s a.bin', url: 'http://example.test/x?y=1', options: { arguments: `-v "two words" 'x y' a\\ b`, password: 'pw' }, passwords: ['infected'] };
    const host = PACKAGES.map((entry) => ({
      command: entry.spec.command ? expandTemplate(entry.spec.command, context) : null,
      fallback: entry.fallbackCommand(context) ?? null,
      unpack: entry.unpack?.(context).argv ?? null,
    }));
    const guest = askGuest(
      [
        'out = []',
        'for spec in catalogue.specs:',
        '    unpack = spec.get("unpack")',
        '    out.append({',
        '        "command": packages.expand(spec["command"], question["context"]) if "command" in spec else None,',
        '        "fallback": packages.expand(spec["fallback"], question["context"]) if "fallback" in spec else None,',
        '        "unpack": packages.expand(unpack["command"], question["context"], unpack["into"]) if unpack else None,',
        '    })',
        'print(json.dumps(out))',
      ].join('\n'),
      // The guest is given what the host worked out: the argument words and the passwords to try.
      { context: { path: context.path, url: context.url, arguments: ['-v', 'two words', 'x y', 'a b'], passwords: passwordsToTry(context) } },
    );
    assert.deepEqual(guest, host);
    assert.deepEqual(host.find((entry) => entry.unpack)?.unpack?.slice(-3), ['/tmp/s a.bin', '/tmp/unpacked', 'pw']);
  });

  it('picks the same file of an unpacked archive, by name or by the first a package runs', async () => {
    const root = join(scratch, 'root');
    const into = join(root, 'tmp', 'unpacked');
    mkdirSync(join(into, 'docs'), { recursive: true });
    mkdirSync(join(into, 'src'), { recursive: true });
    writeFileSync(join(into, 'docs', 'readme'), Buffer.from([0, 1, 2, 3, 0xff, 0xfe]));
    writeFileSync(join(into, 'src', 'main.js'), 'console.log("hi")\n');
    writeFileSync(join(into, 'src', 'tool.py'), 'print("hi")\n');
    chmodSync(join(into, 'src', 'tool.py'), 0o755);
    for (const wanted of [undefined, 'tool.py', 'docs/readme']) {
      const host = await pickUnpackedFile(root, '/tmp/unpacked', wanted);
      const guest = askGuest('path, kind, spec = packages.pick_unpacked(catalogue, question["into"], question.get("wanted"))\nprint(json.dumps([path, spec["name"]]))', {
        into,
        wanted,
      }) as [string, string];
      assert.deepEqual([guest[0].slice(root.length), guest[1]], [host.path, host.package.name], `wanted: ${wanted}`);
    }
    assert.throws(() => askGuest('packages.pick_unpacked(catalogue, question["into"], "nothing")', { into }), /no file named 'nothing'/);
  });
});
