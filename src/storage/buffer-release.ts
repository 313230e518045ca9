import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Every chunk read from a socket is a fresh buffer outside the JavaScript heap. V8 frees those only when
 * the small objects that hold them are collected, and while a large upload streams through, that
 * happens when a 16 MB young generation fills or 32 MB or more of dead buffers have piled up: a 1 GiB
 * upload then holds 35-40 MB of memory it no longer uses. A young-generation collection every few
 * megabytes (a small young generation is quick to collect) keeps the service's growth during a 1 GiB
 * upload under 10 MB in bench/api.ts.
 */
const collectYoung = youngCollector();

/** Counts bytes as they stream through and collects the young generation every `everyBytes`. */
export class BufferRelease {
  private sinceCollection = 0;

  constructor(private readonly everyBytes = 4 * 1024 * 1024) {}

  add(bytes: number): void {
    this.sinceCollection += bytes;
    if (this.sinceCollection < this.everyBytes) return;
    this.sinceCollection = 0;
    collectYoung();
  }
}

/** V8's collector, reached without starting Node with --expose-gc; a no-op where V8 refuses. */
function youngCollector(): () => void {
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as (options: { type: 'minor' }) => void;
    return () => gc({ type: 'minor' });
  } catch {
    return () => undefined;
  } finally {
    // Only the collector taken here: other code and later contexts see no `gc` global.
    setFlagsFromString('--no-expose-gc');
  }
}
