/** The static analysis of the sample as the report has it: PE or ELF headers, sections, imports, script facts, packers. */
import { asText } from './format';
import { usePage } from './pager';
import type { Report } from './report';
import { isRecord, ValueView } from './value-view';

export function StaticAnalysis({ report }: { report: Report }) {
  const facts = isRecord(report.static) ? Object.entries(report.static) : [];
  const yara = report.target?.file?.yara ?? [];
  if (facts.length === 0 && yara.length === 0) return <p class="muted">No static analysis in this report.</p>;
  return (
    <section class="static">
      {yara.length > 0 ? (
        <>
          <h2>YARA matches</h2>
          <ul class="plain">
            {yara.map((match, index) => (
              <li key={index}>
                <span class="mono">{asText(match.name)}</span> <span class="muted">{asText(match.meta?.description ?? '')}</span>
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {facts.map(([key, value]) => (
        <div key={key} class={`static-part static-${key}`}>
          <h2>{key}</h2>
          {key === 'pe_imports' && Array.isArray(value) ? <Imports imports={value} /> : <ValueView value={value} />}
        </div>
      ))}
    </section>
  );
}

/** PE imports: each library with the functions taken from it. */
function Imports({ imports }: { imports: unknown[] }) {
  const { rows, pager } = usePage(imports.filter(isRecord), 25);
  return (
    <>
      <dl class="fields">
        {rows.map((library, index) => (
          <div key={index}>
            <dt class="mono">{asText(library.dll)}</dt>
            <dd class="mono">
              {(Array.isArray(library.imports) ? library.imports : [])
                .map((entry: unknown) => (isRecord(entry) ? asText(entry.name ?? `#${asText(entry.ordinal)}`) : asText(entry)))
                .join(', ')}
            </dd>
          </div>
        ))}
      </dl>
      {pager}
    </>
  );
}
