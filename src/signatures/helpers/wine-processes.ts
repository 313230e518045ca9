import type { BehaviorEvent } from '../../report/events.js';
import type { ProcessTable } from '../process-table.js';

/**
 * Wine's own programs: the system processes Wine starts for itself (on demand too, e.g. services.exe when a
 * sample opens the service manager) and the launcher that starts the sample. What they do is Wine's
 * housekeeping, never the sample's behaviour. cmd.exe and rundll32.exe are not here: they run the
 * sample's commands and DLLs.
 */
const WINE_PROGRAMS = [
  'services.exe', 'winedevice.exe', 'plugplay.exe', 'explorer.exe', 'rpcss.exe', 'svchost.exe',
  'wineboot.exe', 'winemenubuilder.exe', 'conhost.exe', 'start.exe', 'tabtip.exe', 'mscorsvw.exe',
];

/** Linux keeps 15 bytes of a process name (comm): `winemenubuilder.exe` shows as `winemenubuilder`. */
const COMM_LENGTH = 15;
const WINE_COMMS = new Set(WINE_PROGRAMS.map((name) => name.slice(0, COMM_LENGTH)));

/** Where Wine installs its programs in the prefix. */
const SYSTEM_FOLDER = /^[a-z]:\\windows\\(system32|syswow64)\\[^\\]+$/i;

/**
 * Whether an event comes from one of Wine's own programs. By its process name first: Wine names every
 * process after its Windows program before that program's first call. A sample may take such a name
 * (svchost.exe is a favourite), so a process whose command line runs that name from anywhere but the
 * system folder is the sample's. (Wine's loader passes the Windows command line on in argv.)
 */
export function isWineProgram(event: BehaviorEvent, processes: ProcessTable): boolean {
  // A process whose program is a Windows path ran in Windows itself (a guest's monitor named it): Wine's
  // processes run Wine's Linux loader.
  if (/^[A-Za-z]:\\/.test(processes.get(event.pid)?.path ?? '')) return false;
  const comm = event.comm.toLowerCase();
  if (!WINE_COMMS.has(comm)) return false;
  const argv = processes.get(event.pid)?.argv ?? [];
  return !argv.some((arg) => /[\\/]/.test(arg) && namesProgram(arg, comm) && !SYSTEM_FOLDER.test(arg));
}

/** Whether a path's last part is the program a (possibly cut) process name stands for. */
function namesProgram(path: string, comm: string): boolean {
  const name = path.slice(Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\')) + 1).toLowerCase();
  return name.slice(0, COMM_LENGTH) === comm && WINE_PROGRAMS.includes(name);
}

/** Wine's loader and preloader, which every Windows program's host process runs. */
const WINE_LOADER_PATH = /^\/usr\/lib\/wine\/wine(64)?(-preloader)?$/;

/**
 * Whether a process is, for now, only Wine's loader at work: forked from a Windows program and not yet
 * executing anything else. Wine starts a child program by forking and making it a session leader of its
 * own before it executes the loader again; that is Windows' CreateProcess, not a daemon.
 */
export function isWineLoader(pid: number, processes: ProcessTable): boolean {
  return WINE_LOADER_PATH.test(processes.get(pid)?.path ?? '');
}
