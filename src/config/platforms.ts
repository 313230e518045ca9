/** The platform of Windows machines, and of tasks asking for one (`platform` of a machine and of a task). */
export const WINDOWS_PLATFORM = 'windows';

/** The machinery kind whose machines run Windows programs under Wine. */
export const WINE_MACHINE_KIND = 'linux';
