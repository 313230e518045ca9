import { basename, extname } from 'node:path';

/** What kind of script a sample is: from its `#!` line, else from its file name when the content is text. */
export interface ScriptInfo {
  language: string;
  shebang: string | null;
  interpreter: string | null;
  arguments: string[];
}

const INTERPRETERS: Array<[RegExp, string]> = [
  [/^(sh|bash|dash|zsh|ksh|mksh|ash|busybox)$/, 'shell'],
  [/^python[\d.]*$/, 'python'],
  [/^perl[\d.]*$/, 'perl'],
  [/^ruby[\d.]*$/, 'ruby'],
  [/^(node|nodejs)$/, 'javascript'],
  [/^php[\d.]*$/, 'php'],
  [/^lua[\d.]*$/, 'lua'],
  [/^(tclsh|wish)[\d.]*$/, 'tcl'],
  [/^[gm]?awk$/, 'awk'],
  [/^(pwsh|powershell)$/, 'powershell'],
];

const EXTENSIONS: Record<string, string> = {
  '.sh': 'shell',
  '.bash': 'shell',
  '.py': 'python',
  '.pl': 'perl',
  '.rb': 'ruby',
  '.js': 'javascript',
  '.mjs': 'javascript',
  '.cjs': 'javascript',
  '.jse': 'jscript-encoded',
  '.php': 'php',
  '.lua': 'lua',
  '.ps1': 'powershell',
  '.vbs': 'vbscript',
  '.vbe': 'vbscript-encoded',
  '.bat': 'batch',
  '.cmd': 'batch',
  '.hta': 'hta',
  '.wsf': 'wsf',
};

export function detectScript(name: string, head: Buffer): ScriptInfo | undefined {
  if (!looksLikeText(head)) return undefined;
  const firstLine = head.toString('utf8', 0, Math.min(head.length, 512)).split(/\r?\n/)[0] ?? '';
  if (firstLine.startsWith('#!')) {
    const words = firstLine.slice(2).trim().split(/\s+/).filter(Boolean);
    let [interpreter = '', ...args] = words;
    if (basename(interpreter) === 'env') {
      // `#!/usr/bin/env [-S] [VAR=value...] python3 -u`: the program is the first plain word.
      const program = args.findIndex((arg) => !arg.startsWith('-') && !arg.includes('='));
      interpreter = program >= 0 ? args[program]! : interpreter;
      args = program >= 0 ? args.slice(program + 1) : [];
    }
    const program = basename(interpreter);
    const language = INTERPRETERS.find(([pattern]) => pattern.test(program))?.[1] ?? program;
    return { language, shebang: firstLine, interpreter: interpreter || null, arguments: args };
  }
  const language = EXTENSIONS[extname(name).toLowerCase()];
  return language === undefined ? undefined : { language, shebang: null, interpreter: null, arguments: [] };
}

/** No NUL byte and almost only printable characters (UTF-8 allowed) in the first bytes. */
function looksLikeText(head: Buffer): boolean {
  const sample = head.subarray(0, 8192);
  if (sample.length === 0 || sample.includes(0)) return false;
  let control = 0;
  for (const byte of sample) if (byte < 0x20 && byte !== 9 && byte !== 10 && byte !== 13 && byte !== 12) control++;
  return control / sample.length < 0.02;
}
