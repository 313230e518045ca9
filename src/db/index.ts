import type { Kysely, Transaction } from 'kysely';
import { DistributedNodeStore } from './distributed-nodes.js';
import { DistributedTaskStore } from './distributed-tasks.js';
import { ClusterViewStore } from './cluster-view.js';
import { GuestStore } from './guests.js';
import { MachineStore } from './machines.js';
import { NodeStore } from './nodes.js';
import { SampleStore } from './samples.js';
import type { Database } from './schema.js';
import { SearchStore } from './search.js';
import { SubmissionStore } from './submissions.js';
import { TaskPageStore } from './task-pages.js';
import { TaskStore } from './tasks.js';

/**
 * The typed data layer the rest of nestbox uses: every query lives in a store, and nothing outside db/
 * builds SQL. Store methods take an optional transaction, so that changes to several tables are made
 * together or not at all.
 */
export interface Stores {
  /** Runs `work` in one transaction, handed to the store methods it calls; commits when it resolves. */
  transaction<T>(work: (trx: Transaction<Database>) => Promise<T>): Promise<T>;
  tasks: TaskStore;
  /** The web interface's task list. */
  taskPages: TaskPageStore;
  samples: SampleStore;
  machines: MachineStore;
  submissions: SubmissionStore;
  guests: GuestStore;
  /** The nodes of the cluster: registration, heartbeats, leases. */
  nodes: NodeStore;
  /** The search index over reported analyses. */
  search: SearchStore;
  /** Cuckoo's distributed API and the remote nodes it adds. */
  distributedNodes: DistributedNodeStore;
  distributedTasks: DistributedTaskStore;
  /** The nodes, their machines and running tasks, as the status views show them. */
  clusterView: ClusterViewStore;
}

export function createStores(db: Kysely<Database>): Stores {
  return {
    transaction: (work) => db.transaction().execute(work),
    tasks: new TaskStore(db),
    taskPages: new TaskPageStore(db),
    samples: new SampleStore(db),
    machines: new MachineStore(db),
    submissions: new SubmissionStore(db),
    guests: new GuestStore(db),
    nodes: new NodeStore(db),
    search: new SearchStore(db),
    distributedNodes: new DistributedNodeStore(db),
    distributedTasks: new DistributedTaskStore(db),
    clusterView: new ClusterViewStore(db),
  };
}
