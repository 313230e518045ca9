import { baseApi, stringArg, type WinCall } from '../helpers/windows-calls.js';
import { filePathOf } from '../helpers/windows-files.js';
import { isRegistryLook, registryPathOf } from '../helpers/windows-registry.js';
import type { SignatureContext, SignatureInfo } from '../signature.js';
import { WindowsCallSignature } from './windows-call-signature.js';

/** Names only a virtual machine's or sandbox's drivers, tools, devices, keys and windows carry. */
const VM_ARTIFACT =
  /(vbox|virtualbox|vmware|vmtools|vmhgfs|vmmouse|vmusbmouse|vmx_svga|vmxnet|vm3dmp|vmmemctl|vmrawdsk|vmci\b|vmGuestLib|VMSwitchUserControlClass|qemu-ga|\\qemu\b|xenservice|\\xen\\|prl_(cc|tools)|parallels tools|vmicheartbeat|vmbus|SbieDll|sandboxie)/i;
/** Registry values whose text tells the hardware vendor, read to compare it with a VM's. */
const HARDWARE_VALUES = [
  /^HKEY_LOCAL_MACHINE\\HARDWARE\\DEVICEMAP\\Scsi\\Scsi Port \d+\\Scsi Bus \d+\\Target Id \d+\\Logical Unit Id \d+\\Identifier$/i,
  /^HKEY_LOCAL_MACHINE\\HARDWARE\\Description\\System\\(SystemBiosVersion|VideoBiosVersion|SystemBiosDate)$/i,
];
/** The first three bytes of the network cards of VirtualBox, VMware, Parallels, Xen, Hyper-V and QEMU/KVM. */
const VM_MAC = /\b(08[-:]?00[-:]?27|00[-:]?0c[-:]?29|00[-:]?50[-:]?56|00[-:]?05[-:]?69|00[-:]?1c[-:]?14|00[-:]?1c[-:]?42|00[-:]?16[-:]?3e|00[-:]?15[-:]?5d|52[-:]?54[-:]?00)\b/i;

const FILE_LOOKS = new Set(['CreateFile', 'GetFileAttributes', 'GetFileAttributesEx', 'FindFirstFile', 'FindFirstFileEx', 'PathFileExists', 'NtCreateFile', 'NtOpenFile', 'NtQueryAttributesFile', 'NtQueryFullAttributesFile']);
const WINDOW_FINDS = new Set(['FindWindow', 'FindWindowEx']);
const MODULE_LOOKS = new Set(['GetModuleHandle', 'GetModuleHandleEx', 'LoadLibrary', 'LoadLibraryEx']);
const STRING_COMPARES = new Set(['lstrcmp', 'lstrcmpi', 'CompareString', 'CompareStringEx', 'StrStr', 'StrStrI', 'StrCmpI', 'StrCmpN', 'StrCmpNI', 'RtlCompareUnicodeString', 'RtlEqualUnicodeString']);
const ADAPTER_LISTS = new Set(['GetAdaptersInfo', 'GetAdaptersAddresses']);

/**
 * Checks for a virtual machine or sandbox: registry keys, driver and tool files, devices, windows and DLLs
 * of VirtualBox, VMware, QEMU, Xen, Parallels, Hyper-V or Sandboxie; reading the disk's or BIOS's vendor
 * string; comparing text with a VM vendor's MAC address prefix (with the adapter list that gave it).
 */
export class WinAntivm extends WindowsCallSignature {
  readonly info: SignatureInfo = {
    name: 'win_antivm',
    description: 'Checks whether it runs in a virtual machine or sandbox (VM registry keys, files, devices, windows, hardware strings, MAC prefixes)',
    severity: 2,
    categories: ['anti-vm'],
    ttp: ['T1497.001'],
  };

  /** Process -> its adapter listing call, marked when the process also compares a VM MAC prefix. */
  readonly #adapters = new Map<number, WinCall>();

  protected onCall(event: WinCall, ctx: SignatureContext): void {
    const api = baseApi(event);
    if (ADAPTER_LISTS.has(api)) {
      if (!this.#adapters.has(event.pid)) this.#adapters.set(event.pid, event);
    } else if (STRING_COMPARES.has(api)) {
      this.#compared(event, ctx);
    } else if (lookedAtArtifact(event, api)) {
      this.markEvent(event, ctx);
    }
  }

  #compared(event: WinCall, ctx: SignatureContext): void {
    const strings = Object.values(event.args).filter((value): value is string => typeof value === 'string');
    if (strings.some((text) => VM_MAC.test(text))) {
      const adapters = this.#adapters.get(event.pid);
      if (adapters) this.markEvent(adapters, ctx);
      this.markEvent(event, ctx);
    } else if (strings.some((text) => VM_ARTIFACT.test(text))) {
      this.markEvent(event, ctx);
    }
  }
}

function lookedAtArtifact(event: WinCall, api: string): boolean {
  if (isRegistryLook(event)) {
    const path = registryPathOf(event) ?? '';
    return VM_ARTIFACT.test(path) || HARDWARE_VALUES.some((value) => value.test(path));
  }
  if (FILE_LOOKS.has(api)) return VM_ARTIFACT.test(filePathOf(event) ?? '');
  if (WINDOW_FINDS.has(api)) return VM_ARTIFACT.test([stringArg(event, 'lpClassName', 'lpszClass'), stringArg(event, 'lpWindowName', 'lpszWindow')].join(' '));
  if (MODULE_LOOKS.has(api)) return VM_ARTIFACT.test(stringArg(event, 'lpModuleName', 'lpLibFileName', 'module_name') ?? '');
  return false;
}
