import { baseApi, dwordArg, type WinCall } from '../helpers/windows-calls.js';
import type { SignatureContext, SignatureInfo } from '../signature.js';
import { WindowsCallSignature } from './windows-call-signature.js';

/** NtQueryInformationProcess classes that only a debugger check asks for. */
const DEBUG_PROCESS_CLASSES = new Set([0x07 /* ProcessDebugPort */, 0x1e /* ProcessDebugObjectHandle */, 0x1f /* ProcessDebugFlags */]);
const THREAD_HIDE_FROM_DEBUGGER = 0x11;
const SYSTEM_KERNEL_DEBUGGER_INFORMATION = 0x23;

/** Whether a call is a debugger check that ordinary programs do not make. */
function isDebuggerProbe(event: WinCall): boolean {
  switch (baseApi(event)) {
    case 'CheckRemoteDebuggerPresent':
      return true;
    case 'NtQueryInformationProcess':
    case 'ZwQueryInformationProcess':
      return DEBUG_PROCESS_CLASSES.has(dwordArg(event, 'ProcessInformationClass') ?? -1);
    case 'NtSetInformationThread':
    case 'ZwSetInformationThread':
      return dwordArg(event, 'ThreadInformationClass') === THREAD_HIDE_FROM_DEBUGGER;
    case 'NtQuerySystemInformation':
    case 'ZwQuerySystemInformation':
      return dwordArg(event, 'SystemInformationClass') === SYSTEM_KERNEL_DEBUGGER_INFORMATION;
    default:
      return false;
  }
}

/**
 * Debugger checks: CheckRemoteDebuggerPresent, the debug port/object/flags of NtQueryInformationProcess,
 * hiding a thread from debuggers, the kernel debugger's state. IsDebuggerPresent alone does not count
 * (runtimes and ordinary tools ask it); it is marked beside a real probe of the same process.
 */
export class WinAntidebug extends WindowsCallSignature {
  readonly info: SignatureInfo = {
    name: 'win_antidebug',
    description: 'Checks whether a debugger is attached (debug port, remote debugger, hidden threads)',
    severity: 2,
    categories: ['anti-debug'],
    ttp: ['T1622'],
  };

  /** Process -> its IsDebuggerPresent call, until a probe makes it count. */
  readonly #asked = new Map<number, WinCall>();
  readonly #probing = new Set<number>();

  protected onCall(event: WinCall, ctx: SignatureContext): void {
    if (baseApi(event) === 'IsDebuggerPresent') {
      if (this.#probing.has(event.pid)) this.markEvent(event, ctx);
      else if (!this.#asked.has(event.pid)) this.#asked.set(event.pid, event);
      return;
    }
    if (!isDebuggerProbe(event)) return;
    this.#probing.add(event.pid);
    const asked = this.#asked.get(event.pid);
    if (asked) this.markEvent(asked, ctx);
    this.markEvent(event, ctx);
  }
}
