/**
 * What a machinery prepares once per machine (a guest root, an image and its ready state...), made on
 * first use and shared by every task of that machine. A preparation that failed is forgotten, so the
 * next task tries again instead of failing on an old error forever.
 */
export class MachineContexts<T> {
  private readonly made = new Map<string, Promise<T>>();

  constructor(private readonly prepare: (name: string) => Promise<T>) {}

  get(name: string): Promise<T> {
    let context = this.made.get(name);
    if (!context) {
      context = this.prepare(name);
      this.made.set(name, context);
      context.catch(() => this.made.delete(name));
    }
    return context;
  }

  /** The contexts made or being made so far. */
  all(): Promise<T>[] {
    return [...this.made.values()];
  }
}
