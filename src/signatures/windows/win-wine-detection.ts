import { baseApi, stringArg, type WinCall } from '../helpers/windows-calls.js';
import { registryPathOf } from '../helpers/windows-registry.js';
import type { SignatureContext, SignatureInfo } from '../signature.js';
import { WindowsCallSignature } from './windows-call-signature.js';

/**
 * Public exports only Wine's ntdll/kernel32 have: asking for one is asking "am I under Wine". (Not the
 * internal `__wine_*` ones: Wine's own programs, such as the cmd.exe a sample starts, look those up.)
 */
const WINE_EXPORT = /^(wine_get_version|wine_get_build_id|wine_get_host_version|wine_server_call|wine_get_unix_file_name|wine_get_dos_file_name)$/;
/** Wine's own registry branch itself (Wine's DLLs open its subkeys for their settings; a program has no reason to open the branch). */
const WINE_KEY = /^HKEY_(CURRENT_USER|LOCAL_MACHINE)\\Software\\Wine$/i;
const KEY_OPENS = new Set(['RegOpenKey', 'RegOpenKeyEx', 'NtOpenKey', 'NtOpenKeyEx', 'ZwOpenKey', 'ZwOpenKeyEx']);

/**
 * Checks for Wine, the way samples avoid analysis under it: GetProcAddress for wine_get_version and
 * Wine's other exports, or opening HKCU/HKLM\Software\Wine.
 */
export class WinWineDetection extends WindowsCallSignature {
  readonly info: SignatureInfo = {
    name: 'win_wine_detection',
    description: 'Checks whether it runs under Wine (wine_get_version and other Wine exports, the Software\\Wine registry key)',
    severity: 2,
    categories: ['anti-sandbox'],
    ttp: ['T1497.001'],
  };

  protected onCall(event: WinCall, ctx: SignatureContext): void {
    const api = baseApi(event);
    if (api === 'GetProcAddress' || api === 'LdrGetProcedureAddress') {
      if (WINE_EXPORT.test(stringArg(event, 'lpProcName', 'function_name', 'FunctionName') ?? '')) this.markEvent(event, ctx);
    } else if (KEY_OPENS.has(api) && WINE_KEY.test(registryPathOf(event) ?? '')) {
      this.markEvent(event, ctx);
    }
  }
}
