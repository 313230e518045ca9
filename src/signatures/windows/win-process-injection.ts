import { baseApi, dwordArg, processKey, targetsOtherProcess, type WinCall } from '../helpers/windows-calls.js';
import { startsProgram } from '../helpers/windows-commands.js';
import type { SignatureContext, SignatureInfo } from '../signature.js';
import { WindowsCallSignature } from './windows-call-signature.js';

type Step = 'alloc' | 'write' | 'thread';

/** Calls on another process's memory or threads, by the step of an injection they are. */
const STEPS: Record<string, Step> = {
  VirtualAllocEx: 'alloc',
  VirtualAllocExNuma: 'alloc',
  NtAllocateVirtualMemory: 'alloc',
  ZwAllocateVirtualMemory: 'alloc',
  WriteProcessMemory: 'write',
  NtWriteVirtualMemory: 'write',
  ZwWriteVirtualMemory: 'write',
  NtMapViewOfSection: 'write',
  ZwMapViewOfSection: 'write',
  MapViewOfFile2: 'write',
  CreateRemoteThread: 'thread',
  CreateRemoteThreadEx: 'thread',
  NtCreateThreadEx: 'thread',
  ZwCreateThreadEx: 'thread',
  RtlCreateUserThread: 'thread',
};
const PROCESS_HANDLE = ['hProcess', 'ProcessHandle', 'process_handle'];
/** Redirecting an existing thread to written code: hollowing (a new context) and APC injection. */
const HIJACKS = new Set(['SetThreadContext', 'Wow64SetThreadContext', 'NtSetContextThread', 'ZwSetContextThread', 'QueueUserAPC', 'NtQueueApcThread', 'NtQueueApcThreadEx']);
const CREATE_SUSPENDED = 0x4;

interface Caller {
  /** Target process -> the steps done to it. */
  targets: Map<string, Partial<Record<Step, WinCall>>>;
  suspendedStart?: WinCall;
}

/**
 * Code injection into another process: memory written into it (after an allocation, or by mapping a
 * section) and then run there, by a remote thread or by redirecting a thread of a process the caller
 * started suspended (process hollowing, APC injection).
 */
export class WinProcessInjection extends WindowsCallSignature {
  readonly info: SignatureInfo = {
    name: 'win_process_injection',
    description: 'Injects code into another process: writes into its memory and runs it there (remote thread, hollowing or APC)',
    severity: 4,
    categories: ['injection'],
    ttp: ['T1055', 'T1055.002', 'T1055.012'],
  };

  readonly #callers = new Map<number, Caller>();

  protected onCall(event: WinCall, ctx: SignatureContext): void {
    const api = baseApi(event);
    const caller = this.#caller(event.pid);
    if (startsProgram(event) && ((dwordArg(event, 'dwCreationFlags', 'creation_flags') ?? 0) & CREATE_SUSPENDED) !== 0) {
      caller.suspendedStart ??= event;
      return;
    }
    if (HIJACKS.has(api)) {
      this.#hijacked(caller, event, ctx);
      return;
    }
    const step = STEPS[api];
    if (step === undefined || !targetsOtherProcess(event, ...PROCESS_HANDLE)) return;
    const key = processKey(event, ...PROCESS_HANDLE);
    const steps = caller.targets.get(key) ?? {};
    caller.targets.set(key, steps);
    if (step !== 'thread') {
      steps[step] ??= event;
    } else if (steps.write) {
      for (const done of [steps.alloc, steps.write, event]) if (done) this.markEvent(done, ctx);
    }
  }

  /** A thread redirected after the caller started a process suspended and wrote into another process. */
  #hijacked(caller: Caller, event: WinCall, ctx: SignatureContext): void {
    if (!caller.suspendedStart) return;
    const written = [...caller.targets.values()].filter((steps) => steps.write);
    if (written.length === 0) return;
    this.markEvent(caller.suspendedStart, ctx);
    for (const steps of written) for (const done of [steps.alloc, steps.write]) if (done) this.markEvent(done, ctx);
    this.markEvent(event, ctx);
  }

  #caller(pid: number): Caller {
    let caller = this.#callers.get(pid);
    if (!caller) {
      caller = { targets: new Map() };
      this.#callers.set(pid, caller);
    }
    return caller;
  }
}
