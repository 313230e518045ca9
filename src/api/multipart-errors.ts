import { type ErrorKind, NestboxError } from '../errors.js';

type Problem = readonly [ErrorKind, string];

/**
 * What the multipart parser throws at a malformed body, said in the API's terms. busboy's errors are
 * plain Errors told apart only by their messages (it gives them no code), @fastify/multipart's have
 * codes; without these tables they reach the error handler as 500s or in terse library wording.
 */
const BUSBOY_MESSAGES: ReadonlyArray<readonly [RegExp, Problem]> = [
  [/^Multipart: Boundary not found$/, ['invalid_input', 'The multipart body has no boundary: send Content-Type: multipart/form-data; boundary=<boundary>']],
  [/^The needle cannot have a length bigger than 256\.$/, ['invalid_input', 'The multipart boundary is longer than 256 characters']],
  [/^Unexpected end of multipart data$/, ['invalid_input', 'The multipart body ended before its closing boundary']],
  [/^(Part|Preamble) terminated early due to unexpected end of multipart data$/, ['invalid_input', 'The multipart body ended in the middle of a part']],
];

const MULTIPART_CODES: Readonly<Record<string, Problem>> = {
  FST_MP_PREMATURE_CLOSE: ['invalid_input', 'The request was closed before its multipart body was complete'],
  FST_PROTO_VIOLATION: ['invalid_input', 'A form part is named like a JavaScript object property (such as __proto__); rename it'],
  FST_INVALID_JSON_FIELD_ERROR: ['invalid_input', 'A form field declared as application/json is not valid JSON'],
  FST_PARTS_LIMIT: ['too_large', 'The form has more parts than the server accepts'],
  FST_FILES_LIMIT: ['too_large', 'The form has more files than the server accepts'],
  FST_FIELDS_LIMIT: ['too_large', 'The form has more fields than the server accepts'],
};

/** The domain error for a multipart parser failure, or undefined when `error` is something else. */
export function multipartProblem(error: unknown): NestboxError | undefined {
  if (!(error instanceof Error)) return undefined;
  const problem = problemOf(error);
  return problem && new NestboxError(problem[0], problem[1], { cause: error });
}

function problemOf(error: Error): Problem | undefined {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return Object.hasOwn(MULTIPART_CODES, code) ? MULTIPART_CODES[code] : undefined;
  // busboy's own errors carry no code; anything coded (file system, Fastify) is not one of them.
  if (code !== undefined) return undefined;
  return BUSBOY_MESSAGES.find(([pattern]) => pattern.test(error.message))?.[1];
}
