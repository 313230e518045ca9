import { isWineProgram } from '../helpers/wine-processes.js';
import type { WinCall } from '../helpers/windows-calls.js';
import { Signature, type SignatureContext } from '../signature.js';

/**
 * A signature on the Windows API calls of the sample's processes under Wine: it gets every `win.call`
 * event except those of Wine's own programs (wine-processes.ts).
 */
export abstract class WindowsCallSignature extends Signature<'win.call'> {
  override readonly kinds: readonly 'win.call'[] = ['win.call'];

  override onEvent(event: WinCall, ctx: SignatureContext): void {
    if (isWineProgram(event, ctx.processes)) return;
    this.onCall(event, ctx);
  }

  protected abstract onCall(event: WinCall, ctx: SignatureContext): void;
}
