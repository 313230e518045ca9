/** argv as one line, each argument quoted like a shell would need it (the behaviour section's `command_line`). */
export function commandLine(argv: readonly string[] | undefined): string {
  return (Array.isArray(argv) ? argv.map(String) : []).map((arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`)).join(' ');
}
