import type { Insertable } from 'kysely';
import type { MachinesTable } from '../../src/db/schema.js';

// Rows other nodes of a cluster would have written to the shared database, for tests that show them.

/** An ISO time `seconds` ago (negative: ahead, as a lease's end). */
export function secondsAgo(seconds: number): string {
  return new Date(Date.now() - seconds * 1000).toISOString();
}

/** An enabled linux machine of node `node`, locked or free. */
export function machineOf(node: string, name: string, locked = false): Insertable<MachinesTable> {
  return {
    name, label: name, kind: 'linux', ip: '10.200.0.2', platform: 'linux', tags: '[]', options: '[]', interface: null, snapshot: null,
    locked: locked ? 1 : 0, locked_changed_on: null, status: null, status_changed_on: null, resultserver_ip: '10.200.0.1', resultserver_port: 2042,
    enabled: 1, node,
  };
}
