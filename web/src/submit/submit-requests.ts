import { ApiError, send } from '../api';
import { type CreationOptions, creationFields } from './creation-options';

/** What one submission made: its task ids, and the server's message for what it refused. */
export interface Outcome {
  label: string;
  taskIds: number[];
  errors: string[];
}

/** How a file is submitted: as it is, one task per file of an archive, or an archive's one chosen file. */
export type FileChoice = { kind: 'whole' } | { kind: 'each' } | { kind: 'member'; member: string };

export async function submitFile(file: File, choice: FileChoice, options: CreationOptions): Promise<Outcome> {
  if (choice.kind === 'each') {
    const form = formOf(creationFields(options));
    form.append('files', file, file.name);
    return submission(file.name, form);
  }
  const member = choice.kind === 'member' ? choice.member : undefined;
  const form = formOf(creationFields(options, { unique: true, member }));
  form.append('file', file, file.name);
  const label = member === undefined ? file.name : `${file.name} → ${member}`;
  return single(label, '/tasks/create/file', form);
}

export function submitUrl(url: string, options: CreationOptions): Promise<Outcome> {
  const form = formOf(creationFields(options));
  form.append('url', url);
  return single(url, '/tasks/create/url', form);
}

/** Hashes and URLs, one a line, in one create/submit. */
export function submitStrings(lines: string, options: CreationOptions): Promise<Outcome> {
  const form = formOf(creationFields(options));
  form.append('strings', lines);
  const count = lines.split('\n').filter((line) => line.trim() !== '').length;
  return submission(`${count} hash(es) and URL(s)`, form);
}

async function single(label: string, path: string, form: FormData): Promise<Outcome> {
  try {
    const { task_id } = await send<{ task_id: number }>('POST', path, form);
    return { label, taskIds: [task_id], errors: [] };
  } catch (error) {
    return refused(label, error);
  }
}

async function submission(label: string, form: FormData): Promise<Outcome> {
  try {
    const answer = await send<{ task_ids: number[]; errors: unknown[] }>('POST', '/tasks/create/submit', form);
    return { label, taskIds: answer.task_ids, errors: answer.errors.map(String) };
  } catch (error) {
    return refused(label, error);
  }
}

function refused(label: string, error: unknown): Outcome {
  if (error instanceof ApiError || error instanceof Error) return { label, taskIds: [], errors: [error.message] };
  throw error;
}

function formOf(fields: Array<[string, string]>): FormData {
  const form = new FormData();
  for (const [name, value] of fields) form.append(name, value);
  return form;
}
