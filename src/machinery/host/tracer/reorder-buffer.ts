/** How far back a record is put in its place as it arrives; one that belongs further back waits for a sort. */
const NEAR = 64;

/**
 * Puts records back in time order. bpftrace empties one buffer per CPU after another, so records of
 * one CPU can come seconds after later records of another (a burst fills a buffer that takes long to
 * empty); nestbox's monitor sends nearly in order (what a process held back comes a little late).
 * Records are held until records at least `windowSeconds` newer have arrived, then released sorted by
 * time (stably, so the records of one probe keep their order). A record only a little out of order is
 * put in its place as it arrives, so that the held records seldom need sorting.
 */
export class ReorderBuffer<T extends { ts: number }> {
  private held: T[] = [];
  private newest = Number.NEGATIVE_INFINITY;
  /** Whether `held` is in time order: false once a record came too far out of order to be placed. */
  private inOrder = true;

  constructor(
    private readonly windowSeconds: number,
    private readonly release: (item: T) => void,
  ) {}

  push(item: T): void {
    const held = this.held;
    if (item.ts > this.newest) this.newest = item.ts;
    let at = held.length;
    // After every record of the same time: records of one time keep the order they came in.
    while (at > 0 && held[at - 1]!.ts > item.ts && held.length - at < NEAR) at--;
    if (at === held.length) {
      held.push(item);
    } else if (at > 0 && held[at - 1]!.ts > item.ts) {
      held.push(item);
      this.inOrder = false;
    } else {
      held.splice(at, 0, item);
    }
  }

  /** Releases what is older than the newest record by more than the window. */
  releaseSettled(): void {
    this.releaseUpTo(this.newest - this.windowSeconds);
  }

  releaseAll(): void {
    this.releaseUpTo(Number.POSITIVE_INFINITY);
  }

  private releaseUpTo(cutoff: number): void {
    const held = this.held;
    if (held.length === 0) return;
    if (!this.inOrder) held.sort((a, b) => a.ts - b.ts);
    this.inOrder = true;
    let count = 0;
    while (count < held.length && held[count]!.ts <= cutoff) count++;
    if (count === 0) return;
    this.held = held.slice(count);
    for (let i = 0; i < count; i++) this.release(held[i]!);
  }
}
