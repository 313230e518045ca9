/**
 * ssdeep (spamsum) context-triggered piecewise hashing as one streaming pass, giving the same text as
 * `ssdeep -b` (libfuzzy's digest without flags).
 *
 * The digest needs a block size that depends on the total length, which a stream does not know in
 * advance. So every candidate block size ("level" i, block size 3·2^i) is tracked at once. A level
 * starts when the rolling hash first triggers at its size. Levels too small to be chosen at the end are
 * dropped on the way, so only a handful are live at any time.
 */

const WINDOW = 7;
const MIN_BLOCK = 3;
const DIGEST_LENGTH = 64;
const HALF = DIGEST_LENGTH / 2;
const LEVELS = 31;
/** The piece hash is FNV-1 (init 0x28021967, prime 0x01000193); only its low 6 bits reach the digest. */
const PIECE_START = 0x28021967 & 63;
const FNV_PRIME = 0x01000193;
/** Inputs longer than this cannot be hashed by libfuzzy either (its largest block size × 64). */
export const SSDEEP_MAX_INPUT = MIN_BLOCK * 2 ** (LEVELS - 1) * DIGEST_LENGTH;

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const BASE64_CODES = Uint8Array.from(BASE64, (char) => char.charCodeAt(0));
/**
 * Each level's two 6-bit piece hashes share one int32, one per 16-bit lane, so a single multiply steps
 * both: h' = (h · prime ^ byte) mod 64, where only prime mod 64 matters.
 */
const PRIME_LOW = FNV_PRIME & 63;
const LANES = 0x003f003f;
const BOTH_START = PIECE_START | (PIECE_START << 16);

const blockSize = (level: number) => MIN_BLOCK * 2 ** level;

/** libfuzzy's rule: levels above the one a `size`-byte input can choose (plus one) are never read. */
function levelLimit(size: number): number {
  let level = 0;
  while (blockSize(level) * DIGEST_LENGTH < size && level < LEVELS - 2) level++;
  return level + 1;
}

export class SsdeepHasher {
  // Rolling hash over the last WINDOW bytes: h1 = sum, h2 = position-weighted sum, h3 = shift/xor.
  private readonly window = new Uint8Array(WINDOW);
  private windowPos = 0;
  private h1 = 0;
  private h2 = 0;
  private h3 = 0;

  /**
   * Per level: the running piece hash (low lane) and a second one (high lane) that stops being reset
   * once the digest is half full; the second part of the output is cut to half length and ends with it.
   */
  private readonly pieces = new Int32Array(LEVELS);
  /** Digest characters per level; the byte after the last one is 0 unless the digest is full. */
  private readonly digest = new Uint8Array(LEVELS * DIGEST_LENGTH);
  private readonly digestLength = new Uint8Array(LEVELS);
  /** The character the half-length hash last produced at a trigger, 0 when none since its reset. */
  private readonly halfChar = new Uint8Array(LEVELS);

  /** Live levels are [first, end). */
  private first = 0;
  private end = 1;
  /** The highest level that may still be opened. */
  private readonly endLimit: number;
  /** Low bits that must be zero in the rolling sum for a trigger at level `first`. */
  private mask = 0;
  private total = 0;
  /** Once the input is longer than this, level `first` can be dropped when the next one is half full. */
  private dropBorder = MIN_BLOCK * DIGEST_LENGTH;
  /** Past the last level, one more piece hash is kept for the second part of a near-empty digest. */
  private tracksTail = false;
  private tailPiece = 0;

  /**
   * `maxSize`, when the caller can promise the input is no longer, lets the hasher skip levels that
   * input can never use (a large speed-up); the digest is the same.
   */
  constructor(private readonly maxSize?: number) {
    this.pieces[0] = BOTH_START;
    this.endLimit = maxSize === undefined ? LEVELS - 1 : levelLimit(maxSize);
  }

  update(data: Uint8Array): this {
    this.total += data.length;
    if (this.maxSize !== undefined && this.total > this.maxSize) {
      throw new RangeError(`ssdeep input grew past its promised size of ${this.maxSize} bytes`);
    }
    const window = this.window;
    const pieces = this.pieces;
    let h1 = this.h1;
    let h2 = this.h2;
    let h3 = this.h3;
    let windowPos = this.windowPos;
    let first = this.first;
    let end = this.end;
    let mask = this.mask;
    for (let k = 0; k < data.length; k++) {
      const byte = data[k];
      h2 = h2 - h1 + WINDOW * byte;
      h1 = h1 + byte - window[windowPos];
      window[windowPos] = byte;
      windowPos = windowPos === WINDOW - 1 ? 0 : windowPos + 1;
      h3 = (h3 << 5) ^ byte;

      const spread = (byte | (byte << 16)) & LANES;
      for (let i = first; i < end; i++) pieces[i] = (Math.imul(pieces[i], PRIME_LOW) ^ spread) & LANES;
      if (end === LEVELS && this.tracksTail) this.tailPiece = (Math.imul(this.tailPiece, PRIME_LOW) ^ byte) & 63;

      // A trigger at level i is (rolling sum + 1) ≡ 0 mod 3·2^i. As 3 is odd, that is: the low i bits
      // are zero and the sum is a multiple of 3. A rolling sum of 2^32 - 1 never triggers.
      const sum = (h1 + h2 + h3 + 1) | 0;
      if ((sum & mask) !== 0 || sum === 0) continue;
      const unsigned = sum >>> 0;
      // 2^16 ≡ 1 (mod 3), so the two halves add up to the same remainder with small-integer arithmetic.
      if (((unsigned >>> 16) + (unsigned & 0xffff)) % MIN_BLOCK !== 0) continue;
      this.trigger((unsigned / MIN_BLOCK) >>> first);
      first = this.first;
      end = this.end;
      mask = this.mask;
    }
    this.h1 = h1;
    this.h2 = h2;
    this.h3 = h3;
    this.windowPos = windowPos;
    return this;
  }

  /** The ssdeep text `<blocksize>:<digest>:<digest>`, or null for inputs too long for ssdeep. */
  digestText(): string | null {
    if (this.total > SSDEEP_MAX_INPUT) return null;
    const level = this.chooseLevel();
    const rolling = (this.h1 + this.h2 + this.h3) | 0;
    const firstLast = rolling !== 0 ? BASE64_CODES[this.pieces[level] & 63] : this.digest[level * DIGEST_LENGTH + this.digestLength[level]];
    let text = `${blockSize(level)}:${this.digestChars(level, this.digestLength[level], firstLast)}:`;
    if (level < this.end - 1) {
      const next = level + 1;
      const secondLast = rolling !== 0 ? BASE64_CODES[this.pieces[next] >>> 16] : this.halfChar[next];
      text += this.digestChars(next, Math.min(this.digestLength[next], HALF - 1), secondLast);
    } else if (rolling !== 0) {
      text += BASE64[level === 0 ? this.pieces[level] & 63 : this.tailPiece];
    }
    return text;
  }

  /** The size estimate from the length, lowered while that level's digest is less than half full. */
  private chooseLevel(): number {
    let level = this.first;
    while (blockSize(level) * DIGEST_LENGTH < this.total) level++;
    if (level >= this.end) level = this.end - 1;
    while (level > this.first && this.digestLength[level] < HALF) level--;
    return level;
  }

  /** `count` stored characters of a level, then `last` unless it is 0. */
  private digestChars(level: number, count: number, last: number): string {
    const start = level * DIGEST_LENGTH;
    const text = String.fromCharCode(...this.digest.subarray(start, start + count));
    return last === 0 ? text : text + String.fromCharCode(last);
  }

  /** `levels` has bit n set when level first+n is the last one the trigger reaches. */
  private trigger(levels: number): void {
    let i = this.first;
    do {
      if (this.digestLength[i] === 0) this.startNextLevel();
      const length = this.digestLength[i];
      const both = this.pieces[i];
      this.digest[i * DIGEST_LENGTH + length] = BASE64_CODES[both & 63];
      this.halfChar[i] = BASE64_CODES[both >>> 16];
      if (length < DIGEST_LENGTH - 1) {
        // A full digest keeps overwriting its last character, folding the tail into one piece.
        this.digestLength[i] = length + 1;
        this.digest[i * DIGEST_LENGTH + length + 1] = 0;
        if (length + 1 < HALF) {
          this.pieces[i] = BOTH_START;
          this.halfChar[i] = 0;
        } else {
          this.pieces[i] = (both & ~63) | PIECE_START;
        }
      } else {
        this.dropFirstLevel();
      }
      if (levels & 1) break;
      levels >>>= 1;
    } while (++i < this.end);
  }

  /** The first trigger at the highest level opens the level above, which starts from its state. */
  private startNextLevel(): void {
    const top = this.end - 1;
    if (this.end <= this.endLimit) {
      this.pieces[this.end] = this.pieces[top];
      this.digestLength[this.end] = 0;
      this.digest[this.end * DIGEST_LENGTH] = 0;
      this.halfChar[this.end] = 0;
      this.end++;
    } else if (this.end === LEVELS && !this.tracksTail) {
      this.tracksTail = true;
      this.tailPiece = this.pieces[top] & 63;
    }
  }

  private dropFirstLevel(): void {
    if (this.end - this.first < 2) return;
    if (this.dropBorder >= this.total) return;
    if (this.digestLength[this.first + 1] < HALF) return;
    this.first++;
    this.dropBorder *= 2;
    this.mask = this.mask * 2 + 1;
  }
}

export function ssdeep(data: Uint8Array): string | null {
  return new SsdeepHasher(data.length).update(data).digestText();
}
