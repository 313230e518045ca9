/**
 * The task's ATT&CK techniques on the tactics of the Enterprise matrix: one column per tactic, each
 * technique under its tactics (src/signatures/attack-tactics.ts), with the signatures that found it.
 */
import { TACTICS, tacticsOf } from '../../../src/signatures/attack-tactics';
import type { SignatureMatch } from './report';
import { isRecord } from './value-view';

interface Found {
  id: string;
  name: string;
  signatures: string[];
}

export function AttackMatrix({ signatures }: { signatures: SignatureMatch[] }) {
  const found = techniquesOf(signatures);
  if (found.length === 0) return <p class="muted">No ATT&amp;CK technique found.</p>;
  const unplaced = found.filter((technique) => tacticsOf(technique.id).length === 0);
  return (
    <>
      <div class="attack-matrix">
        {TACTICS.map((tactic) => {
          const cells = found.filter((technique) => tacticsOf(technique.id).includes(tactic.id));
          return (
            <div key={tactic.id} class={cells.length > 0 ? 'tactic' : 'tactic empty'}>
              <h3 title={tactic.id}>{tactic.name}</h3>
              {cells.map((technique) => (
                <Technique key={technique.id} technique={technique} />
              ))}
            </div>
          );
        })}
      </div>
      {unplaced.length > 0 ? (
        <div class="attack-unplaced">
          <h3>Techniques of no known tactic</h3>
          {unplaced.map((technique) => (
            <Technique key={technique.id} technique={technique} />
          ))}
        </div>
      ) : null}
    </>
  );
}

function Technique({ technique }: { technique: Found }) {
  return (
    <div class="technique" title={`found by ${technique.signatures.join(', ')}`}>
      <span class="mono">{technique.id}</span>
      <span>{technique.name}</span>
    </div>
  );
}

/** Each technique once, with the signatures that name it. */
function techniquesOf(signatures: SignatureMatch[]): Found[] {
  const byId = new Map<string, Found>();
  for (const signature of signatures) {
    for (const [id, technique] of Object.entries(isRecord(signature.ttp) ? signature.ttp : {})) {
      const entry = byId.get(id) ?? { id, name: technique?.short ?? '', signatures: [] };
      entry.signatures.push(String(signature.name));
      byId.set(id, entry);
    }
  }
  return [...byId.values()].sort((a, b) => a.id.localeCompare(b.id));
}
