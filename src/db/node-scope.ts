import { hostname } from 'node:os';
import { type RawBuilder, sql } from 'kysely';
import type { Config } from '../config/schema.js';
import type { DatabaseKind } from './connect.js';

/** The rows of tasks and machines a node counts as its own. */
export interface NodeScope {
  /** This node's name: what it writes to tasks.node and machines.node. */
  node: string;
  /** One host (SQLite): every row is this node's, but for tasks handed to remote nodes. */
  everything: boolean;
  /** Rows that name no node (from before the cluster) are this node's. */
  unassigned: boolean;
}

/** The node's name: cluster.node_name, or the host's name when that is empty. */
export function configuredNodeName(cluster: Config['cluster']): string {
  return cluster.node_name || hostname();
}

/**
 * Which rows of tasks and machines are this node's. On SQLite there is one host, so every row is (but for
 * tasks handed to remote nodes, which are theirs), whatever name the host had when it wrote them. On
 * PostgreSQL a node owns the rows that name it; a node of role `all` also owns the rows from before the
 * cluster (machines.node '' and tasks.node null), so that a single host upgraded in place keeps its work.
 */
export function nodeScope(cluster: Config['cluster'], databaseKind: DatabaseKind): NodeScope {
  return { node: configuredNodeName(cluster), everything: databaseKind === 'sqlite', unassigned: cluster.role === 'all' };
}

/** A condition on a `node` column: the row is in the scope. */
export function ownedBy(scope: NodeScope, column: string): RawBuilder<boolean> {
  const ref = sql.ref(column);
  // Remote nodes (Cuckoo or nestbox servers driven over REST, cluster/remote/) hold the tasks handed to them.
  if (scope.everything) return sql<boolean>`(${ref} is null or ${ref} not in (select name from nodes where role = 'remote'))`;
  if (!scope.unassigned) return sql<boolean>`${ref} = ${scope.node}`;
  return sql<boolean>`(${ref} = ${scope.node} or ${ref} = '' or ${ref} is null)`;
}
