/**
 * Puts records back in time order. bpftrace reads one buffer per CPU, so a thread that moved between
 * CPUs can have its later record printed before its earlier one; records are held for `windowSeconds`
 * and released sorted by time (stable, so records of one probe keep their order).
 */
export class ReorderBuffer<T extends { ts: number }> {
  private held: T[] = [];

  constructor(
    private readonly windowSeconds: number,
    private readonly release: (item: T) => void,
  ) {}

  push(item: T): void {
    this.held.push(item);
  }

  /** Releases what is older than `now` minus the window. */
  releaseBefore(now: number): void {
    if (this.held.length === 0) return;
    const cutoff = now - this.windowSeconds;
    this.held.sort((a, b) => a.ts - b.ts);
    let count = 0;
    while (count < this.held.length && this.held[count]!.ts <= cutoff) count++;
    if (count === 0) return;
    const ready = this.held.slice(0, count);
    this.held = this.held.slice(count);
    for (const item of ready) this.release(item);
  }

  releaseAll(): void {
    this.releaseBefore(Number.POSITIVE_INFINITY);
  }
}
