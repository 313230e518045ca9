import { runCommand } from './command.js';

const C_LOCALE = { ...process.env, LC_ALL: 'C' };

/** libmagic's description of a file (`file -b`), 'data' when it cannot tell; packages are chosen by it. */
export async function fileType(path: string): Promise<string> {
  const result = await runCommand(['file', '--brief', '--', path], { env: C_LOCALE });
  return result.code === 0 ? result.stdout.trim() : 'data';
}

/** libmagic's descriptions of many files in one `file` run. */
export async function fileTypes(paths: string[]): Promise<string[]> {
  const result = await runCommand(['file', '--brief', '--no-pad', '--', ...paths], { env: C_LOCALE });
  return result.stdout.split('\n').slice(0, paths.length);
}
