import { fileTouches, touches } from '../helpers/file-access.js';
import { headOf } from '../helpers/file-search.js';
import { basename, dirname } from '../helpers/paths.js';
import { Signature, type EventOf, type SignatureContext, type SignatureInfo } from '../signature.js';

type Kind = 'file.open' | 'file.rename';

const NOTE_NAME = /^(?=.*(decrypt|restore|recover|ransom|unlock|encrypted|your[_ -]?files))[^/]*\.(txt|html?|hta|rtf|url)$/i;
const RANSOM_WORDS = /\b(bitcoin|btc|monero|xmr|decrypt(ion|or)?|ransom|tor browser|\.onion|private key|your files (have been|are) encrypted)\b/gi;
/** The same note in this many folders, or one note whose text asks for a ransom. */
const MIN_FOLDERS = 2;
const MIN_RANSOM_WORDS = 2;

export class RansomwareNote extends Signature<Kind> {
  readonly info: SignatureInfo = {
    name: 'ransomware_note',
    description: 'Writes ransom notes (files telling the victim how to pay to get files back)',
    severity: 4,
    categories: ['ransomware'],
    ttp: ['T1486'],
  };
  override readonly kinds: readonly Kind[] = ['file.open', 'file.rename'];

  /** Note name -> folder -> the event that created it there. */
  readonly #notes = new Map<string, Map<string, EventOf<Kind>>>();

  override onEvent(event: EventOf<Kind>): void {
    for (const touch of fileTouches(event)) {
      if (!touches(touch, ['create']) || !NOTE_NAME.test(basename(touch.path))) continue;
      const folders = this.#notes.get(basename(touch.path)) ?? new Map<string, EventOf<Kind>>();
      if (!folders.has(dirname(touch.path))) folders.set(dirname(touch.path), event);
      this.#notes.set(basename(touch.path), folders);
    }
  }

  override async onComplete(ctx: SignatureContext): Promise<void> {
    for (const [name, folders] of this.#notes) {
      if (folders.size < MIN_FOLDERS) continue;
      this.markIoc('note', name, `written in ${folders.size} folders`);
      for (const event of folders.values()) this.markEvent(event, ctx);
    }
    for (const dropped of ctx.report.dropped ?? []) {
      if (!NOTE_NAME.test(basename(dropped.filepath || dropped.name))) continue;
      const text = (await headOf(dropped.path ?? '', 64 * 1024))?.toString('utf8') ?? '';
      const words = new Set((text.match(RANSOM_WORDS) ?? []).map((word) => word.toLowerCase()));
      if (words.size >= MIN_RANSOM_WORDS) this.markIoc('note', dropped.filepath || dropped.name, `mentions ${[...words].join(', ')}`);
    }
  }
}
