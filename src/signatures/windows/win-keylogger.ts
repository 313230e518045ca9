import { baseApi, dwordArg, numberArg, type WinCall } from '../helpers/windows-calls.js';
import type { SignatureContext, SignatureInfo } from '../signature.js';
import { WindowsCallSignature } from './windows-call-signature.js';

const WH_KEYBOARD = 2;
const WH_KEYBOARD_LL = 13;
const KEY_POLLS = new Set(['GetAsyncKeyState', 'GetKeyState']);
/** Distinct keys polled before it is a keyboard scan rather than a program checking Shift or a hotkey. */
const MIN_KEYS_POLLED = 30;
/** Poll calls kept per process as marks once it qualifies. */
const KEPT_POLLS = 20;

/**
 * Keylogging: a global keyboard hook (SetWindowsHookEx with WH_KEYBOARD_LL, or WH_KEYBOARD for all
 * threads), or a loop asking GetAsyncKeyState/GetKeyState for many different keys.
 */
export class WinKeylogger extends WindowsCallSignature {
  readonly info: SignatureInfo = {
    name: 'win_keylogger',
    description: 'Captures keystrokes: a global keyboard hook or polling the state of many keys',
    severity: 3,
    categories: ['infostealer'],
    ttp: ['T1056.001'],
  };

  /** Process -> the distinct keys it polled, with the first call for each (up to KEPT_POLLS). */
  readonly #polled = new Map<number, { keys: Set<number>; calls: WinCall[] }>();

  protected onCall(event: WinCall, ctx: SignatureContext): void {
    const api = baseApi(event);
    if (api === 'SetWindowsHookEx') {
      const hook = dwordArg(event, 'idHook');
      if (hook === WH_KEYBOARD_LL || (hook === WH_KEYBOARD && numberArg(event, 'dwThreadId') === 0)) this.markEvent(event, ctx);
    } else if (KEY_POLLS.has(api)) {
      this.#poll(event, ctx);
    }
  }

  #poll(event: WinCall, ctx: SignatureContext): void {
    const key = dwordArg(event, 'vKey', 'nVirtKey');
    if (key === undefined) return;
    const polled = this.#polled.get(event.pid) ?? { keys: new Set<number>(), calls: [] };
    this.#polled.set(event.pid, polled);
    if (polled.keys.has(key)) return;
    polled.keys.add(key);
    if (polled.calls.length < KEPT_POLLS) polled.calls.push(event);
    if (polled.keys.size === MIN_KEYS_POLLED) for (const call of polled.calls) this.markEvent(call, ctx);
  }
}
