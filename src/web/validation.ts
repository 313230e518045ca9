import { z } from 'zod';
import { invalidInput } from '../errors.js';

/** A request's JSON body or query checked against `schema`; anything else is a 400 naming the first problem. */
export function validated<T extends z.ZodType>(schema: T, value: unknown, what: 'request body' | 'query'): z.infer<T> {
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  throw invalidInput(`Invalid ${what}: ${where}${issue?.message ?? 'not accepted'}`);
}

/** An optional query value, where an empty one (a form's blank field) counts as missing. */
export const optional = <T extends z.ZodType>(schema: T) => z.preprocess((value) => (value === '' ? undefined : value), schema.optional());
