/** argv as one line, each argument quoted like a shell would need it (the behaviour section's `command_line`). */
/**
 * argv as a Windows command line: an argument with a space, tab or quote in double quotes, its quotes
 * escaped (the rule programs built with Microsoft's C runtime parse by).
 */
export function windowsCommandLine(argv: readonly string[]): string {
  return argv.map((arg) => (arg !== '' && !/[\s"]/.test(arg) ? arg : `"${arg.replace(/(\\*)"/g, '$1$1\\"').replace(/(\\+)$/, '$1$1')}"`)).join(' ');
}

export function commandLine(argv: readonly string[] | undefined): string {
  return (Array.isArray(argv) ? argv.map(String) : []).map((arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`)).join(' ');
}
