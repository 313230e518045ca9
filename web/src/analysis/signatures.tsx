/** The signatures that matched, strongest first, each with its evidence and ATT&CK techniques. */
import { AttackMatrix } from './attack-matrix';
import { asText, severityLevel, severityWord } from './format';
import { usePage } from './pager';
import type { SignatureMatch } from './report';
import { isRecord } from './value-view';

export function Signatures({ signatures }: { signatures: SignatureMatch[] }) {
  const sorted = [...signatures].sort((a, b) => b.severity - a.severity);
  return (
    <section class="signatures">
      <h2>Signatures ({signatures.length})</h2>
      {sorted.length === 0 ? <p class="muted">No signature matched.</p> : sorted.map((signature, index) => <Signature key={index} signature={signature} />)}
      <h2>ATT&amp;CK matrix</h2>
      <AttackMatrix signatures={signatures} />
    </section>
  );
}

function Signature({ signature }: { signature: SignatureMatch }) {
  const level = severityLevel(signature.severity);
  const techniques = Object.entries(isRecord(signature.ttp) ? signature.ttp : {});
  return (
    <article class={`signature level-${level}`}>
      <header>
        <span class={`badge level-${level}`}>{severityWord(signature.severity)}</span>
        <strong class="signature-name mono">{asText(signature.name)}</strong>
        <span class="signature-description">{asText(signature.description)}</span>
      </header>
      {techniques.length > 0 ? (
        <ul class="techniques">
          {techniques.map(([id, technique]) => (
            <li key={id} title={technique?.long ?? ''}>
              <span class="mono">{id}</span> {technique?.short ?? ''}
            </li>
          ))}
        </ul>
      ) : null}
      {signature.categories?.length ? <p class="muted">Categories: {signature.categories.map(asText).join(', ')}</p> : null}
      <details>
        <summary>Evidence ({signature.markcount ?? signature.marks?.length ?? 0})</summary>
        <Marks marks={signature.marks ?? []} />
      </details>
    </article>
  );
}

function Marks({ marks }: { marks: SignatureMatch['marks'] }) {
  const { rows, pager } = usePage(marks, 20);
  return (
    <>
      <ul class="marks mono">
        {rows.map((mark, index) => (
          <li key={index}>{markText(mark)}</li>
        ))}
      </ul>
      {pager}
    </>
  );
}

/** One piece of evidence as a line of text: a call with its arguments, an indicator, or its fields. */
export function markText(mark: Record<string, unknown>): string {
  if (mark.type === 'call' && isRecord(mark.call)) {
    const call = mark.call;
    return `pid ${asText(mark.pid)}: ${asText(call.api)}(${argumentsText(call.arguments)}) = ${asText(call.return_value)}`;
  }
  if (mark.type === 'ioc') {
    const description = mark.description ? ` — ${asText(mark.description)}` : '';
    return `${asText(mark.category)}: ${asText(mark.ioc)}${description}`;
  }
  const { type: _type, ...fields } = mark;
  return Object.entries(fields)
    .map(([key, value]) => `${key}: ${asText(value)}`)
    .join(', ');
}

export function argumentsText(args: unknown): string {
  if (!isRecord(args)) return asText(args);
  return Object.entries(args)
    .map(([name, value]) => `${name}=${asText(value)}`)
    .join(', ');
}
