/**
 * Any part of a report shown as text, whatever its shape: objects as name/value lists, arrays of
 * objects as tables, long lists a page at a time. For sections whose keys vary (static analysis of
 * PE, ELF or scripts; memory regions). Everything is a text node.
 */
import { asText } from './format';
import { usePage } from './pager';

export function ValueView({ value }: { value: unknown }) {
  if (Array.isArray(value)) return <ListView items={value} />;
  if (isRecord(value)) return <RecordView record={value} />;
  return <span class="mono">{asText(value)}</span>;
}

function RecordView({ record }: { record: Record<string, unknown> }) {
  const entries = Object.entries(record);
  if (entries.length === 0) return <span class="muted">—</span>;
  return (
    <dl class="fields">
      {entries.map(([key, value]) => (
        <div key={key}>
          <dt>{key}</dt>
          <dd>
            <ValueView value={value} />
          </dd>
        </div>
      ))}
    </dl>
  );
}

function ListView({ items }: { items: unknown[] }) {
  const { rows, pager } = usePage(items, 50);
  if (items.length === 0) return <span class="muted">none</span>;
  if (items.every(isRecord)) return <TableView items={items} rows={rows as Record<string, unknown>[]} pager={pager} />;
  return (
    <>
      <ul class="plain mono">
        {rows.map((item, index) => (
          <li key={index}>{isRecord(item) || Array.isArray(item) ? <ValueView value={item} /> : asText(item)}</li>
        ))}
      </ul>
      {pager}
    </>
  );
}

function TableView({ items, rows, pager }: { items: Record<string, unknown>[]; rows: Record<string, unknown>[]; pager: preact.JSX.Element }) {
  const columns = [...new Set(items.slice(0, 200).flatMap((item) => Object.keys(item)))];
  return (
    <>
      <table class="compact">
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column}>{column}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, index) => (
            <tr key={index}>
              {columns.map((column) => (
                <td key={column} class="mono">
                  {asText(row[column])}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      {pager}
    </>
  );
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
