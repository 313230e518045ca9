import type { SocketAddress } from './trace-records.js';

/** What one of a process's file descriptors refers to, as far as the trace showed. */
export interface FdEntry {
  kind: 'file' | 'socket' | 'pipe' | 'memfd';
  /** File path (as resolved when opened), `memfd:<name>` for memfds, '' for sockets and pipes. */
  path: string;
  /** Sockets: the family, and the peer once connect() named one. */
  family?: string;
  peer?: SocketAddress;
}

/**
 * One process's descriptor table. Threads share their process's table; fork copies it (entries are
 * shared between the copies, as the open file descriptions are).
 */
export class FdTable {
  private readonly entries = new Map<number, FdEntry>();

  get(fd: number): FdEntry | undefined {
    return this.entries.get(fd);
  }

  set(fd: number, entry: FdEntry): void {
    this.entries.set(fd, entry);
  }

  close(fd: number): void {
    this.entries.delete(fd);
  }

  /** dup2/dup3/F_DUPFD: `newfd` now refers to what `oldfd` does (or to something unknown). */
  dup(oldfd: number, newfd: number): void {
    const entry = this.entries.get(oldfd);
    if (entry) this.entries.set(newfd, entry);
    else this.entries.delete(newfd);
  }

  copy(): FdTable {
    const table = new FdTable();
    for (const [fd, entry] of this.entries) table.entries.set(fd, entry);
    return table;
  }
}
