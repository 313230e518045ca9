import { baseApi, stringArg, type WinCall } from './windows-calls.js';

/**
 * What Windows calls that start programs run: their command lines, and the file they execute. The names
 * cover the documented arguments and Cuckoo's (command_line, application_name).
 */

const PROCESS_CALLS = new Set([
  'CreateProcess', 'CreateProcessInternal', 'CreateProcessAsUser', 'CreateProcessWithLogon', 'CreateProcessWithToken',
]);
const SHELL_CALLS = new Set(['ShellExecute', 'ShellExecuteEx']);
const WINEXEC_CALLS = new Set(['WinExec', 'system', '_wsystem']);

export function startsProgram(event: WinCall): boolean {
  const api = baseApi(event);
  return PROCESS_CALLS.has(api) || SHELL_CALLS.has(api) || WINEXEC_CALLS.has(api);
}

/**
 * The command line a program-starting call runs, as one string (application and arguments), or undefined
 * for other calls.
 */
export function commandLineOf(event: WinCall): string | undefined {
  const api = baseApi(event);
  if (PROCESS_CALLS.has(api)) {
    const line = stringArg(event, 'lpCommandLine', 'command_line');
    const application = stringArg(event, 'lpApplicationName', 'application_name');
    return line ?? application;
  }
  if (SHELL_CALLS.has(api)) {
    const file = stringArg(event, 'lpFile', 'filepath');
    const parameters = stringArg(event, 'lpParameters', 'parameters');
    return file === undefined ? undefined : [file, parameters].filter(Boolean).join(' ');
  }
  if (WINEXEC_CALLS.has(api)) return stringArg(event, 'lpCmdLine', 'command', '_Command', 'command_line');
  return undefined;
}

/** The file a program-starting call executes: the application name, else the command line's first word. */
export function executedFileOf(event: WinCall): string | undefined {
  const api = baseApi(event);
  const application = PROCESS_CALLS.has(api) ? stringArg(event, 'lpApplicationName', 'application_name') : SHELL_CALLS.has(api) ? stringArg(event, 'lpFile', 'filepath') : undefined;
  if (application) return application;
  const line = commandLineOf(event);
  return line === undefined ? undefined : firstWord(line);
}

/** A command line's program: quoted, or up to the first blank. */
export function firstWord(line: string): string {
  const trimmed = line.trimStart();
  if (trimmed.startsWith('"')) {
    const end = trimmed.indexOf('"', 1);
    return end < 0 ? trimmed.slice(1) : trimmed.slice(1, end);
  }
  const blank = trimmed.search(/\s/);
  return blank < 0 ? trimmed : trimmed.slice(0, blank);
}
