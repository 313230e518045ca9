import fc from 'fast-check';

/**
 * Multipart bodies for fuzzing the create endpoints: forms built part by part (with odd names, values
 * and part headers), then spoilt by one mutation (cut off, spliced, replaced by noise...).
 */

export interface MultipartBody {
  boundary: string;
  bytes: Buffer;
  /** Where the closing delimiter starts: cutting before it always leaves an incomplete form. */
  closingAt: number;
}

/** The field names the endpoints read, and names that trouble parsers. */
const FIELD_NAMES = ['file', 'files', 'url', 'strings', 'options', 'priority', 'timeout', 'memory', 'unique', 'tags', 'platform', 'machine', 'clock', 'custom', '__proto__', 'constructor', 'hasOwnProperty', ''];
const FIELD_VALUES = ['', '1', '0', '-1', 'yes', 'abc', '99999999999999999999', 'http://example.test/', 'route=none', '\u0000', '{"a":1}', '%00', '../../etc/passwd'];
const FILE_NAMES = ['sample.bin', 'a.7z', 'b.zip', '', '.', '..', '../../etc/passwd', 'C:\\evil.exe', 'name\u0000.bin', 'x'.repeat(300)];
/** Starts of archives, cut short: they reach 7-Zip as damaged archives. */
const BROKEN_ARCHIVES = [
  Buffer.from([0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c, 0x00, 0x04, 0x01, 0x02]),
  Buffer.from('PK\u0003\u0004\u0014\u0000\u0000\u0000', 'latin1'),
  Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x41, 0x42]),
];

const text = fc.string({ maxLength: 40, unit: 'binary' });
const bytes = fc.uint8Array({ maxLength: 300 }).map((array) => Buffer.from(array));
const fieldName = fc.oneof(fc.constantFrom(...FIELD_NAMES), text);

/** Part headers: the usual ones, or ones a parser may choke on. */
const partHeaders = (name: string, filename: string | undefined) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant(disposition(name, filename)) },
    fc.constant(''),
    fc.constant(`${disposition(name, filename)}\r\nContent-Type: application/json`),
    fc.constant(`Content-Disposition: form-data; name*=utf-8''${encodeURIComponent(name)}; filename*=utf-8''%E2%82%AC.bin`),
    fc.constant(`${disposition(name, filename)}\r\n continued: folded line`),
    fc.constant(`${disposition(name, filename)}\r\nX-Long: ${'h'.repeat(20_000)}`),
    text.map((header) => `${disposition(name, filename)}\r\n${header}`),
  );

function disposition(name: string, filename: string | undefined): string {
  const file = filename === undefined ? '' : `; filename="${filename}"`;
  return `Content-Disposition: form-data; name="${name}"${file}`;
}

const fieldPart = fc
  .tuple(fieldName, fc.oneof(fc.constantFrom(...FIELD_VALUES), text))
  .chain(([name, value]) => partHeaders(name, undefined).map((headers) => ({ headers, content: Buffer.from(value, 'latin1') })));

const filePart = fc
  .tuple(fc.constantFrom('file', 'files', 'other'), fc.oneof(fc.constantFrom(...FILE_NAMES), text), fc.oneof(bytes, fc.constantFrom(...BROKEN_ARCHIVES)))
  .chain(([name, filename, content]) => partHeaders(name, filename).map((headers) => ({ headers, content })));

export const boundaries = fc.oneof(
  { weight: 5, arbitrary: fc.stringMatching(/^[A-Za-z0-9'()+_,./:=?-]{1,70}$/) },
  fc.stringMatching(/^[A-Za-z0-9]{257,400}$/),
);

/** A whole form: parts joined by the boundary, with its closing delimiter. */
export const multipartBodies = (boundary: string) =>
  fc.array(fc.oneof(fieldPart, filePart), { maxLength: 5 }).map((parts): MultipartBody => {
    const opened = parts.map(({ headers, content }) => Buffer.concat([Buffer.from(`--${boundary}\r\n${headers}\r\n\r\n`, 'latin1'), content, Buffer.from('\r\n')]));
    const body = Buffer.concat(opened);
    return { boundary, bytes: Buffer.concat([body, Buffer.from(`--${boundary}--\r\n`)]), closingAt: body.length };
  });

/** One way to spoil a body, as data so that a failing case prints readably. */
export type Mutation =
  | { kind: 'none' }
  | { kind: 'cut'; at: number }
  | { kind: 'splice'; at: number; noise: Buffer }
  | { kind: 'noise'; noise: Buffer }
  | { kind: 'bare-lf' }
  | { kind: 'twice' };

const fraction = fc.double({ min: 0, max: 1, noNaN: true });

export const mutations: fc.Arbitrary<Mutation> = fc.oneof(
  fc.constant({ kind: 'none' as const }),
  fraction.map((at) => ({ kind: 'cut' as const, at })),
  fc.tuple(fraction, bytes).map(([at, noise]) => ({ kind: 'splice' as const, at, noise })),
  bytes.map((noise) => ({ kind: 'noise' as const, noise })),
  fc.constant({ kind: 'bare-lf' as const }),
  fc.constant({ kind: 'twice' as const }),
);

export function mutated(body: Buffer, mutation: Mutation): Buffer {
  switch (mutation.kind) {
    case 'none':
      return body;
    case 'cut':
      return body.subarray(0, Math.floor(body.length * mutation.at));
    case 'splice': {
      const at = Math.floor(body.length * mutation.at);
      return Buffer.concat([body.subarray(0, at), mutation.noise, body.subarray(at)]);
    }
    case 'noise':
      return mutation.noise;
    case 'bare-lf':
      return Buffer.from(body.toString('latin1').replaceAll('\r\n', '\n'), 'latin1');
    case 'twice':
      return Buffer.concat([body, body]);
  }
}
