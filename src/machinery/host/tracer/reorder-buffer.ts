/**
 * Puts records back in time order. bpftrace empties one buffer per CPU after another, so records of
 * one CPU can come seconds after later records of another (a burst fills a buffer that takes long to
 * empty). Records are held until records at least `windowSeconds` newer have arrived, then released
 * sorted by time (stably, so the records of one probe keep their order).
 */
export class ReorderBuffer<T extends { ts: number }> {
  private held: T[] = [];
  private newest = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly windowSeconds: number,
    private readonly release: (item: T) => void,
  ) {}

  push(item: T): void {
    this.held.push(item);
    if (item.ts > this.newest) this.newest = item.ts;
  }

  /** Releases what is older than the newest record by more than the window. */
  releaseSettled(): void {
    this.releaseUpTo(this.newest - this.windowSeconds);
  }

  releaseAll(): void {
    this.releaseUpTo(Number.POSITIVE_INFINITY);
  }

  private releaseUpTo(cutoff: number): void {
    if (this.held.length === 0) return;
    this.held.sort((a, b) => a.ts - b.ts);
    let count = 0;
    while (count < this.held.length && this.held[count]!.ts <= cutoff) count++;
    if (count === 0) return;
    const ready = this.held.slice(0, count);
    this.held = this.held.slice(count);
    for (const item of ready) this.release(item);
  }
}
