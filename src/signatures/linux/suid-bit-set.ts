import { invocationOf } from '../helpers/command-line.js';
import { Signature, type EventOf, type SignatureContext, type SignatureInfo } from '../signature.js';

type Kind = 'file.chmod' | 'process.exec';

const S_ISUID_OR_S_ISGID = 0o6000;

/** chmod 4755 / u+s and the like: a planted setuid program gives root back to whoever runs it later. */
export class SuidBitSet extends Signature<Kind> {
  readonly info: SignatureInfo = {
    name: 'suid_bit_set',
    description: 'Sets the setuid or setgid bit on a file',
    severity: 3,
    categories: ['privilege_escalation', 'persistence'],
    ttp: ['T1548.001'],
  };
  override readonly kinds: readonly Kind[] = ['file.chmod', 'process.exec'];

  override onEvent(event: EventOf<Kind>, ctx: SignatureContext): void {
    if (event.kind === 'file.chmod' ? (event.mode & S_ISUID_OR_S_ISGID) !== 0 : chmodSetsSuid(event)) this.markEvent(event, ctx);
  }
}

function chmodSetsSuid(event: EventOf<'process.exec'>): boolean {
  const { program, args } = invocationOf(event);
  if (program !== 'chmod') return false;
  return args.some((arg) => (/^[0-7]{4}$/.test(arg) && (parseInt(arg, 8) & S_ISUID_OR_S_ISGID) !== 0) || /^[ugoa]*[+=][rwxXt]*s/.test(arg));
}
