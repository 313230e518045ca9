import type { EventOf } from '../signature.js';
import { basename } from './paths.js';

export const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'ash', 'mksh', 'csh', 'tcsh', 'fish', 'busybox']);

const INTERPRETER = /^(sh|bash|dash|zsh|ksh|ash|mksh|python[0-9.]*|perl[0-9.]*|ruby[0-9.]*|php[0-9.]*|node|nodejs|lua[0-9.]*)$/;

/** A program run: its name (busybox applets resolved to the applet) and its arguments. */
export interface Invocation {
  program: string;
  args: string[];
}

export function invocationOf(event: EventOf<'process.exec'>): Invocation {
  const program = basename(event.path);
  const args = event.argv.slice(1);
  if (program === 'busybox' && args.length > 0) return { program: basename(args[0] ?? ''), args: args.slice(1) };
  return { program, args };
}

/** The command line as one string, as Cuckoo's `command_line` shows it. */
export function commandLine(argv: readonly string[]): string {
  return argv.join(' ');
}

export function isShell(path: string): boolean {
  return SHELLS.has(basename(path));
}

/**
 * The script an interpreter runs (`sh x.sh`, `python3 -u x.py`), or null for `-c` commands, interactive
 * interpreters and programs that are no interpreters.
 */
export function scriptOf(path: string, argv: readonly string[]): string | null {
  if (!INTERPRETER.test(basename(path))) return null;
  for (const arg of argv.slice(1)) {
    if (arg === '-c' || arg === '-e' || arg === '-m' || arg === '-' || arg === '-i') return null;
    if (!arg.startsWith('-')) return arg;
  }
  return null;
}

/** Whether a shell is started to read commands from its input (interactive or stdin), not to run a script. */
export function isBareShell(path: string, argv: readonly string[]): boolean {
  if (!isShell(path)) return false;
  const args = basename(path) === 'busybox' ? argv.slice(2) : argv.slice(1);
  return args.every((arg) => /^-[ilsp]+$/.test(arg) || arg === '--login' || arg === '--noprofile' || arg === '--norc');
}
