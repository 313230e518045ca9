import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { TACTICS, tacticsOf } from '../../src/signatures/attack-tactics.js';
import { SIGNATURES } from '../../src/signatures/index.js';

const YARA_RULES = join(import.meta.dirname, '..', '..', '..', 'rules', 'yara');

/** The techniques the static rules name in their `attack` metadata. */
function ruleTechniques(): string[] {
  return readdirSync(YARA_RULES)
    .filter((name) => name.endsWith('.yar'))
    .flatMap((name) => [...readFileSync(join(YARA_RULES, name), 'utf8').matchAll(/\battack\s*=\s*"([^"]*)"/g)])
    .flatMap((match) => match[1]!.split(',').map((id) => id.trim()))
    .filter((id) => id !== '');
}

describe('ATT&CK tactics of the techniques nestbox reports', () => {
  it('places every technique of every signature and static rule under at least one tactic', () => {
    const techniques = new Set([...SIGNATURES.flatMap((Signature) => new Signature().info.ttp), ...ruleTechniques()]);
    assert.ok(techniques.size > 30, `only ${techniques.size} techniques found`);
    const unplaced = [...techniques].filter((id) => tacticsOf(id).length === 0);
    assert.deepEqual(unplaced, []);
  });

  it('reads sub-techniques under their parent and knows nothing of other ids', () => {
    assert.deepEqual(tacticsOf('T1059.004'), ['TA0002']);
    assert.deepEqual(tacticsOf('T1059_004'), ['TA0002']);
    assert.deepEqual(tacticsOf('T9999'), []);
    assert.deepEqual(tacticsOf('constructor'), []);
    assert.equal(new Set(TACTICS.map((tactic) => tactic.id)).size, 14);
  });
});
