import { relayFromExcludeList, relayIncludeList } from '../../report/windows-apis.js';

/**
 * What Wine's relay tracing records, as the prepared prefix's HKCU\Software\Wine\Debug values: the APIs
 * processing decodes (src/report/windows-apis.ts), called from anywhere but Wine's own DLLs.
 */
export interface RelaySettings {
  include: string[];
  fromExclude: string[];
}

export function relaySettings(): RelaySettings {
  return { include: relayIncludeList(), fromExclude: relayFromExcludeList() };
}

/**
 * The sample's debug channels: what processing parses (see WINEDEBUG in Wine's documentation). `server`
 * is for wineserver: it turns its request trace on when the sample's first process connects (wine-pids.ts).
 * `exec` is shell32's ShellExecute tracing: its `SHELL_execute mask=... file=... parm=...` line shows the
 * SHELLEXECUTEINFO that relay prints only as a pointer.
 */
export const SAMPLE_WINEDEBUG = 'fixme-all,+pid,+timestamp,+relay,+reg,+process,+exec,+server';
