import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { classifyString } from '../../src/api/submit-strings.js';

/**
 * The parser of create/submit's `strings` lines, property-tested: junk of many shapes never becomes a
 * task, while real hashes, URLs and domain names always do. (api-create-submit.test.ts checks the
 * same through the real endpoint.)
 */

const junkMessage = (line: string) => `'${line}' was neither a valid hash or url`;
const HASH_LENGTHS = new Set([32, 40, 64]);

function assertJunk(line: string): void {
  assert.deepEqual(classifyString(line), { kind: 'error', message: junkMessage(line) }, JSON.stringify(line));
}

/** A non-blank trimmed line, as stringLines() hands them over. */
const line = (arb: fc.Arbitrary<string>) => arb.map((text) => text.trim()).filter((text) => text !== '');

const digits = fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 1, maxLength: 120 });
const hexOfHashLength = fc.constantFrom(32, 40, 64).chain((length) => fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'), minLength: length, maxLength: length }));
const octet = fc.integer({ min: 0, max: 255 });

describe('create/submit strings', () => {
  it('reads the reported line of digits as junk, not as the IPv4 number 0.0.0.83', () => {
    for (const junk of ['0000000000000000000000123', '0000123', '83', '000000000000000000000000000000000000000000123']) assertJunk(junk);
    assertJunk('http://0000000123/');
    assertJunk('http://0x53/');
    assertJunk('http://1.2.3/');
    assertJunk('http://01.02.03.04/');
  });

  it('never makes a task of a line of digits that is not a hash', () => {
    fc.assert(fc.property(digits.filter((text) => !HASH_LENGTHS.has(text.length)), assertJunk), { numRuns: 500 });
  });

  it('never makes a task of a line with no letter and no dot, unless it is a hash', () => {
    // No brackets: `[::1]` is a real (IPv6) address.
    const unit = fc.constantFrom(...'0123456789-_+=*#%&!?:;,(){}<>@$~^|\\/\'" ');
    fc.assert(fc.property(line(fc.string({ unit, minLength: 1, maxLength: 80 })).filter((text) => !HASH_LENGTHS.has(text.length)), assertJunk), { numRuns: 1000 });
  });

  it('never makes a task of numbers joined by dots that are not an IPv4 address as written', () => {
    const dotted = fc.array(fc.nat({ max: 99999 }).map(String), { minLength: 1, maxLength: 6 }).map((parts) => parts.join('.'));
    const notQuad = dotted.filter((text) => !/^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/.test(text));
    fc.assert(fc.property(notQuad, fc.constantFrom('', 'http://', 'https://'), (text, scheme) => assertJunk(scheme + text)), { numRuns: 500 });
  });

  it('never makes a task of a word without a top-level domain, a mail address or another scheme', () => {
    const word = fc.stringMatching(/^[a-z][a-z0-9]{0,20}$/).filter((text) => text !== 'localhost');
    fc.assert(fc.property(word, assertJunk), { numRuns: 300 });
    // A local part holding '/', '?' or '#' reads as a host and a path (a.example/x@y.example): a real URL, not junk.
    const mail = fc.emailAddress().filter((address) => !/[/?#]/.test(address.slice(0, address.lastIndexOf('@'))));
    fc.assert(fc.property(mail, assertJunk), { numRuns: 300 });
    fc.assert(fc.property(fc.domain(), fc.constantFrom('ftp', 'file', 'javascript', 'data', 'gopher'), (domain, scheme) => assertJunk(`${scheme}://${domain}/`)), { numRuns: 200 });
  });

  it('answers every line, whatever it holds, with a hash, a URL with a real host, or the junk message', () => {
    fc.assert(fc.property(line(fc.string({ unit: 'binary', maxLength: 100 })), (text) => {
      const result = classifyString(text);
      if (result.kind === 'error') return assert.equal(result.message, junkMessage(text));
      if (result.kind === 'hash') return assert.ok(HASH_LENGTHS.has(text.length) && /^[0-9a-f]+$/i.test(text));
      assert.match(result.url, /^https?:\/\//i);
      assert.doesNotThrow(() => new URL(result.url));
    }), { numRuns: 2000 });
  });

  it('makes hash items of md5, sha1 and sha256 digests, lower-cased', () => {
    fc.assert(fc.property(hexOfHashLength, (hex) => assert.deepEqual(classifyString(hex), { kind: 'hash', hash: hex.toLowerCase() })), { numRuns: 300 });
    assertJunk('a'.repeat(31));
    assertJunk('0123456789abcdef'.repeat(8)); // 128 digits: a sha512, which cannot be fetched by hash
    assertJunk('g'.repeat(32));
  });

  it('makes URL items of domain names (opened as http://) and of http(s) URLs with a real host', () => {
    fc.assert(fc.property(fc.domain(), (domain) => assert.deepEqual(classifyString(domain), { kind: 'url', url: `http://${domain}` })), { numRuns: 300 });
    const url = fc.webUrl({ validSchemes: ['http', 'https'], withQueryParameters: true, withFragments: true });
    fc.assert(fc.property(url, (text) => assert.deepEqual(classifyString(text), { kind: 'url', url: text })), { numRuns: 300 });
    fc.assert(fc.property(octet, octet, octet, octet, (a, b, c, d) => {
      assert.deepEqual(classifyString(`https://${a}.${b}.${c}.${d}:9001/x`), { kind: 'url', url: `https://${a}.${b}.${c}.${d}:9001/x` });
    }), { numRuns: 200 });
    for (const [text, url] of [
      ['cuckoosandbox.org', 'http://cuckoosandbox.org'],
      ['evil.example:8080/drop?x=1', 'http://evil.example:8080/drop?x=1'],
      ['192.0.2.1/a', 'http://192.0.2.1/a'],
      ['http://[2001:db8::1]:8080/', 'http://[2001:db8::1]:8080/'],
      ['http://localhost:3000/', 'http://localhost:3000/'],
      ['bücher.example', 'http://bücher.example'],
      ['HTTPS://Example.COM/Path', 'HTTPS://Example.COM/Path'],
    ]) assert.deepEqual(classifyString(text!), { kind: 'url', url }, text);
  });
});
