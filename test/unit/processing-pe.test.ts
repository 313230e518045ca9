import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type PeInfo, parsePeFile } from '../../src/formats/pe.js';
import { knownOrdinals } from '../../src/formats/pe-ordinals.js';

/**
 * PE facts compared with python3-pefile (the library Cuckoo uses) on executables and a DLL built here
 * with the mingw-w64 cross compiler: headers, sections with entropy, imports (by name and by ordinal),
 * exports, resources, version information, imphash and an Authenticode signature made with osslsigncode.
 */

const PEFILE_FACTS = `
import json, sys, pefile
pe = pefile.PE(sys.argv[1])
text = lambda b: b.decode('latin1') if isinstance(b, bytes) else b
out = {
  'imphash': pe.get_imphash(),
  'timestamp': pe.FILE_HEADER.TimeDateStamp,
  'entry': pe.OPTIONAL_HEADER.AddressOfEntryPoint,
  'image_base': pe.OPTIONAL_HEADER.ImageBase,
  'dll': pe.is_dll(),
  'sections': [{'name': text(s.Name.rstrip(b'\\0')), 'va': s.VirtualAddress, 'vsize': s.Misc_VirtualSize, 'raw': s.SizeOfRawData, 'entropy': s.get_entropy()} for s in pe.sections],
  'imports': [{'dll': text(e.dll), 'imports': [{'name': text(i.name), 'ordinal': i.ordinal if i.import_by_ordinal else None, 'address': i.address} for i in e.imports]} for e in getattr(pe, 'DIRECTORY_ENTRY_IMPORT', [])],
  'exports': [{'name': text(s.name), 'ordinal': s.ordinal, 'address': pe.OPTIONAL_HEADER.ImageBase + s.address} for s in (pe.DIRECTORY_ENTRY_EXPORT.symbols if hasattr(pe, 'DIRECTORY_ENTRY_EXPORT') else [])],
  'resources': [],
  'versioninfo': [],
  'security_size': pe.OPTIONAL_HEADER.DATA_DIRECTORY[4].Size,
}
for t in getattr(pe, 'DIRECTORY_ENTRY_RESOURCE', None) and pe.DIRECTORY_ENTRY_RESOURCE.entries or []:
  name = str(t.name) if t.name is not None else pefile.RESOURCE_TYPE.get(t.struct.Id)
  for i in t.directory.entries:
    for l in i.directory.entries:
      out['resources'].append({'name': name, 'offset': l.data.struct.OffsetToData, 'size': l.data.struct.Size,
        'language': pefile.LANG.get(l.data.lang), 'sublanguage': pefile.get_sublang_name_for_lang(l.data.lang, l.data.sublang)})
for group in getattr(pe, 'FileInfo', []):
  for entry in group:
    for table in getattr(entry, 'StringTable', []):
      for key, value in table.entries.items():
        out['versioninfo'].append({'name': text(key), 'value': text(value)})
    for var in getattr(entry, 'Var', []):
      for key, value in var.entry.items():
        out['versioninfo'].append({'name': text(key), 'value': text(value)})
print(json.dumps(out))
`;

interface PefileFacts {
  imphash: string;
  timestamp: number;
  entry: number;
  image_base: number;
  dll: boolean;
  sections: Array<{ name: string; va: number; vsize: number; raw: number; entropy: number }>;
  imports: Array<{ dll: string; imports: Array<{ name: string | null; ordinal: number | null; address: number }> }>;
  exports: Array<{ name: string | null; ordinal: number; address: number }>;
  resources: Array<{ name: string; offset: number; size: number; language: string; sublanguage: string }>;
  versioninfo: Array<{ name: string; value: string }>;
  security_size: number;
}

const pefile = (file: string): PefileFacts => JSON.parse(execFileSync('/usr/bin/python3', ['-c', PEFILE_FACTS, file], { encoding: 'utf8' })) as PefileFacts;
const num = (hex: string) => Number.parseInt(hex, 16);

function compareWithPefile(pe: PeInfo, reference: PefileFacts): void {
  assert.equal(pe.pe_imphash, reference.imphash);
  assert.equal(pe.pe_timestamp, new Date(reference.timestamp * 1000).toISOString().slice(0, 19).replace('T', ' '));
  assert.equal(num(pe.pe_header.entry_point as string), reference.entry);
  assert.equal(num(pe.pe_header.image_base as string), reference.image_base);
  assert.equal(pe.pe_header.dll, reference.dll);
  assert.equal(pe.pe_sections.length, reference.sections.length);
  for (const [index, section] of pe.pe_sections.entries()) {
    const expected = reference.sections[index]!;
    assert.equal(section.name, expected.name);
    assert.equal(num(section.virtual_address), expected.va);
    assert.equal(num(section.virtual_size), expected.vsize);
    assert.equal(num(section.size_of_data), expected.raw);
    assert.ok(Math.abs(section.entropy - expected.entropy) < 1e-9, `entropy of ${section.name}: ${section.entropy} vs ${expected.entropy}`);
    assert.match(section.virtual_address, /^0x[0-9a-f]{8}$/);
  }
  assert.deepEqual(
    pe.pe_imports.map((entry) => ({
      dll: entry.dll,
      imports: entry.imports.map((symbol) => ({ name: symbol.name, ordinal: symbol.ordinal ?? null, address: num(symbol.address) })),
    })),
    reference.imports,
  );
  assert.deepEqual(
    pe.pe_exports.map((symbol) => ({ name: symbol.name, ordinal: symbol.ordinal, address: num(symbol.address) })),
    reference.exports,
  );
  assert.deepEqual(
    pe.pe_resources.map((resource) => ({
      name: resource.name,
      offset: num(resource.offset),
      size: num(resource.size),
      language: resource.language,
      sublanguage: resource.sublanguage,
    })),
    reference.resources,
  );
  assert.deepEqual(pe.pe_versioninfo, reference.versioninfo);
  assert.equal(pe.signed, reference.security_size > 0);
  assert.equal(pe.imported_dll_count, reference.imports.length);
}

describe('PE static analysis', () => {
  let dir: string;
  const cc = (args: string[]) => execFileSync('x86_64-w64-mingw32-gcc', ['-O1', ...args], { cwd: dir, stdio: ['ignore', 'ignore', 'ignore'] });
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'nestbox-pe-'));
    writeFileSync(
      join(dir, 'prog.c'),
      `#include <winsock2.h>
#include <windows.h>
__declspec(dllexport) int add(int a, int b) { return a + b; }
__declspec(dllexport) int sub(int a, int b) { return a - b; }
int main(void) {
  WSADATA data; WSAStartup(MAKEWORD(2, 2), &data);
  MessageBoxA(NULL, "see http://pe.example.com/a", "t", 0);
  HANDLE h = CreateFileA("C:\\\\x.txt", GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, 0, NULL);
  CloseHandle(h);
  return 0;
}
`,
    );
    writeFileSync(
      join(dir, 'res.rc'),
      `#include <winver.h>
LANGUAGE 9, 1
1 VERSIONINFO
FILEVERSION 1,2,3,4
BEGIN
  BLOCK "StringFileInfo"
  BEGIN
    BLOCK "040904b0"
    BEGIN
      VALUE "CompanyName", "Nestbox Test Corp"
      VALUE "FileDescription", "Test program"
      VALUE "OriginalFilename", "prog.exe"
    END
  END
  BLOCK "VarFileInfo"
  BEGIN
    VALUE "Translation", 0x409, 1200
  END
END
LANGUAGE 7, 1
42 RCDATA { "raw resource data" }
`,
    );
    execFileSync('x86_64-w64-mingw32-windres', ['res.rc', '-O', 'coff', '-o', 'res.o'], { cwd: dir });
    cc(['-o', 'prog.exe', 'prog.c', 'res.o', '-lws2_32']);
    cc(['-shared', '-o', 'lib.dll', 'prog.c', '-lws2_32']);
    // Import libraries that bind by ordinal: Winsock ordinals pefile names, and one it cannot.
    writeFileSync(join(dir, 'ws2.def'), 'LIBRARY ws2_32.dll\nEXPORTS\nrecv @16 NONAME\nWSAStartup @115 NONAME\n');
    writeFileSync(join(dir, 'custom.def'), 'LIBRARY custom.dll\nEXPORTS\nsecret_fn @300 NONAME\n');
    execFileSync('x86_64-w64-mingw32-dlltool', ['-d', 'ws2.def', '-l', 'libws2ord.a'], { cwd: dir });
    execFileSync('x86_64-w64-mingw32-dlltool', ['-d', 'custom.def', '-l', 'libcustom.a'], { cwd: dir });
    writeFileSync(
      join(dir, 'ord.c'),
      'int __stdcall recv(unsigned long long s, char *b, int l, int f);\nint __stdcall WSAStartup(unsigned short v, void *d);\nint secret_fn(void);\nint main(void) { char d[512]; WSAStartup(0x202, d); recv(0, d, 1, 0); return secret_fn(); }\n',
    );
    cc(['-o', 'ord.exe', 'ord.c', '-L.', '-lws2ord', '-lcustom']);
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '2', '-subj', '/C=DE/L=Berlin/O=Nestbox Signing Test/CN=nestbox test signer'], { cwd: dir, stdio: 'ignore' });
    execFileSync('osslsigncode', ['sign', '-certs', 'cert.pem', '-key', 'key.pem', '-in', 'prog.exe', '-out', 'signed.exe'], { cwd: dir, stdio: 'ignore' });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reads an executable as pefile does: sections, imports, resources, version info, imphash', async () => {
    const pe = await parsePeFile(join(dir, 'prog.exe'));
    assert.ok(pe);
    compareWithPefile(pe, pefile(join(dir, 'prog.exe')));
    assert.equal(pe.pe_header.machine, 'IMAGE_FILE_MACHINE_AMD64');
    assert.ok(pe.pe_imports.some((entry) => entry.dll === 'USER32.dll' && entry.imports.some((symbol) => symbol.name === 'MessageBoxA')));
    assert.deepEqual(
      pe.pe_resources.map((resource) => [resource.name, resource.language]),
      [['RT_RCDATA', 'LANG_GERMAN'], ['RT_VERSION', 'LANG_ENGLISH']],
    );
    assert.deepEqual(pe.pe_versioninfo.find((entry) => entry.name === 'CompanyName'), { name: 'CompanyName', value: 'Nestbox Test Corp' });
    assert.equal(pe.signed, false);
  });

  it('reads a DLL: its exports with ordinals and addresses', async () => {
    const pe = await parsePeFile(join(dir, 'lib.dll'));
    assert.ok(pe);
    compareWithPefile(pe, pefile(join(dir, 'lib.dll')));
    assert.deepEqual(pe.pe_exports.map((symbol) => [symbol.name, symbol.ordinal]), [['add', 1], ['sub', 2]]);
    assert.equal(pe.pe_header.dll, true);
  });

  it('computes imphash as pefile does for imports by ordinal, named or not', async () => {
    const pe = await parsePeFile(join(dir, 'ord.exe'));
    assert.ok(pe);
    compareWithPefile(pe, pefile(join(dir, 'ord.exe')));
    assert.deepEqual(
      pe.pe_imports.find((entry) => entry.dll === 'ws2_32.dll')?.imports.map((symbol) => [symbol.name, symbol.ordinal]),
      [['WSAStartup', 115], ['recv', 16]],
    );
    assert.deepEqual(pe.pe_imports.find((entry) => entry.dll === 'custom.dll')?.imports.map((symbol) => [symbol.name, symbol.ordinal]), [[null, 300]]);
  });

  it('names every ordinal import of ws2_32, wsock32 and oleaut32 that it knows as pefile does, imphash included', async () => {
    // One import library per DLL binding each known ordinal (by ordinal only), and a program using them all.
    const dlls = ['ws2_32.dll', 'wsock32.dll', 'oleaut32.dll'];
    const symbols: string[] = [];
    for (const dll of dlls) {
      const stem = dll.replace('.dll', '');
      const entries = [...knownOrdinals(dll).keys()].map((ordinal) => {
        symbols.push(`${stem}_${ordinal}`);
        return `${stem}_${ordinal} @${ordinal} NONAME`;
      });
      assert.ok(entries.length >= 48, `${dll}: ${entries.length} ordinals`);
      writeFileSync(join(dir, `${stem}-all.def`), `LIBRARY ${dll}\nEXPORTS\n${entries.join('\n')}\n`);
      execFileSync('x86_64-w64-mingw32-dlltool', ['-d', `${stem}-all.def`, '-l', `lib${stem}all.a`], { cwd: dir });
    }
    writeFileSync(
      join(dir, 'all-ordinals.c'),
      `${symbols.map((symbol) => `extern int ${symbol}(void);`).join('\n')}\nvoid *used[] = { ${symbols.map((symbol) => `(void *)${symbol}`).join(', ')} };\nint main(void) { return used[0] != 0; }\n`,
    );
    cc(['-o', 'all-ordinals.exe', 'all-ordinals.c', '-L.', '-lws2_32all', '-lwsock32all', '-loleaut32all']);
    const pe = await parsePeFile(join(dir, 'all-ordinals.exe'));
    assert.ok(pe);
    compareWithPefile(pe, pefile(join(dir, 'all-ordinals.exe')));
    const named = pe.pe_imports.filter((entry) => dlls.includes(entry.dll)).flatMap((entry) => entry.imports);
    assert.equal(named.length, symbols.length);
    assert.ok(named.every((symbol) => symbol.name !== null), 'every ordinal of the tables has its name');
    assert.ok(named.some((symbol) => symbol.name === 'SafeArrayCreateVector') && named.some((symbol) => symbol.name === 'gethostbyname'));
  });

  it('finds the Authenticode signature and its certificate', async () => {
    const pe = await parsePeFile(join(dir, 'signed.exe'));
    assert.ok(pe);
    compareWithPefile(pe, pefile(join(dir, 'signed.exe')));
    assert.equal(pe.signed, true);
    const serial = execFileSync('openssl', ['x509', '-in', join(dir, 'cert.pem'), '-noout', '-serial'], { encoding: 'utf8' }).trim().split('=')[1]!;
    assert.equal(pe.signature.length, 1);
    assert.equal(pe.signature[0]!.common_name, 'nestbox test signer');
    assert.equal(pe.signature[0]!.organization, 'Nestbox Signing Test');
    assert.equal(pe.signature[0]!.country, 'DE');
    assert.equal(pe.signature[0]!.serial_number, serial.toLowerCase());
  });

  it('gives partial facts, never an exception, for a cut-off file', async () => {
    const whole = readFileSync(join(dir, 'prog.exe'));
    writeFileSync(join(dir, 'cut.exe'), whole.subarray(0, 2048));
    const pe = await parsePeFile(join(dir, 'cut.exe'));
    assert.ok(pe);
    assert.ok(pe.pe_sections.length > 0, 'the section table is in the first bytes');
    assert.deepEqual(pe.pe_imports, []);
    writeFileSync(join(dir, 'mz-only.exe'), 'MZ and nothing else');
    assert.equal(await parsePeFile(join(dir, 'mz-only.exe')), undefined);
  });
});
