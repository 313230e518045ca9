/**
 * Where Wine's Windows lives inside a linux machine, and how its files are named the Windows way. The
 * machine's prepared Wine prefix belongs to a plausible desktop user; a sample sees `C:\Users\<user>`,
 * never the Unix path behind it. Shared by the machine that prepares the prefix and by processing, which
 * shows paths under it as Windows paths.
 */
export const WINDOWS_USER = 'abecker';
export const WINDOWS_COMPUTER_NAME = 'DESKTOP-7KQ2M4R';
/** The Unix account the Wine prefix belongs to inside the machine. */
export const WINE_HOME = `/home/${WINDOWS_USER}`;
/** The Wine prefix inside the machine (WINEPREFIX). */
export const WINE_PREFIX = `${WINE_HOME}/.wine`;
/** The prefix's C: drive. */
export const WINE_DRIVE_C = `${WINE_PREFIX}/drive_c`;

/** The C: drive as Wine also reaches it: through the prefix's drive symlink (its renames go that way). */
const DRIVE_C_LINK = `${WINE_PREFIX}/dosdevices/c:`;

/**
 * The Windows path of a file inside the machine: a path under the C: drive (or its `dosdevices/c:` link) as
 * `C:\...`; undefined for any other path (the prefix maps no other drive onto the Unix tree).
 */
export function windowsPathOf(unixPath: string): string | undefined {
  for (const drive of [WINE_DRIVE_C, DRIVE_C_LINK]) {
    if (unixPath !== drive && !unixPath.startsWith(`${drive}/`)) continue;
    const rest = unixPath.slice(drive.length);
    return `C:\\${rest.split('/').filter((part) => part !== '').join('\\')}`;
  }
  return undefined;
}
