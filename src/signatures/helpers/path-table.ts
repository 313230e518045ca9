import { basename, normalize } from './paths.js';

/**
 * Values by the path they are about, answering "is this the same file as one I know" (samePath's rule:
 * absolute paths compare normalised, a relative one by file name) with a few map lookups instead of a scan
 * of every known path. Like a Map it keeps each path's first position, so `find` answers with the earliest
 * known path that names the file, as a scan in insertion order would. Holds at most `limit` paths, so a log
 * writing millions of files costs bounded memory; paths beyond that are not tracked.
 */
export class PathTable<V> {
  readonly #entries = new Map<string, { value: V; position: number }>();
  /** Normalised absolute path -> the first absolute path known under it. */
  readonly #absolute = new Map<string, string>();
  /** File name -> the first relative path known with it. */
  readonly #relativeByName = new Map<string, string>();
  /** File name -> the first path of any kind known with it. */
  readonly #byName = new Map<string, string>();

  constructor(private readonly limit: number) {}

  has(path: string): boolean {
    return this.#entries.has(path);
  }

  get(path: string): V | undefined {
    return this.#entries.get(path)?.value;
  }

  /** Sets the value of a path; a new path beyond the limit is left out. */
  set(path: string, value: V): void {
    const known = this.#entries.get(path);
    if (known) {
      known.value = value;
      return;
    }
    if (this.#entries.size >= this.limit) return;
    this.#entries.set(path, { value, position: this.#entries.size });
    if (path === '') return;
    const name = basename(path);
    if (!this.#byName.has(name)) this.#byName.set(name, path);
    if (!path.startsWith('/')) {
      if (!this.#relativeByName.has(name)) this.#relativeByName.set(name, path);
    } else {
      const normal = normalize(path);
      if (!this.#absolute.has(normal)) this.#absolute.set(normal, path);
    }
  }

  /** The value of the earliest known path that names the same file as `path`. */
  find(path: string): V | undefined {
    if (path === '') return undefined;
    const candidates = path.startsWith('/')
      ? [this.#absolute.get(normalize(path)), this.#relativeByName.get(basename(path))]
      : [this.#byName.get(basename(path))];
    let first: { value: V; position: number } | undefined;
    for (const candidate of candidates) {
      const entry = candidate === undefined ? undefined : this.#entries.get(candidate);
      if (entry && (!first || entry.position < first.position)) first = entry;
    }
    return first?.value;
  }
}
