import type { FastifyInstance } from 'fastify';
import { buildServer } from './api/server.js';
import type { AppContext } from './app.js';
import { NodeRegistry } from './cluster/node-registry.js';
import { RemoteNodeDriver } from './cluster/remote/driver.js';
import type { Scheduler } from './scheduler/scheduler.js';
import { startSearchBackfill } from './search/backfill.js';
import { registerWeb } from './web/index.js';

export interface ServiceOptions {
  /** Run the analysis engine (scheduler, machines, processing) beside the API. */
  engine?: boolean;
  /** How often the scheduler looks at the queue, in ms. */
  pollMs?: number;
  /** Called by GET /exit in debug mode. */
  onExit?: () => void;
}

export interface Service {
  app: FastifyInstance;
  scheduler?: Scheduler;
  /** This node's row in the cluster, its heartbeat and lease. */
  node: NodeRegistry;
  /** Stops the engine (running analyses go back to the queue), then the API. */
  close(): Promise<void>;
}

/**
 * The whole nestbox node: the REST API, the web interface and, unless disabled, the analysis engine
 * behind it. A node of role `main` runs no engine: the workers run the analyses.
 */
export async function createService(ctx: AppContext, options: ServiceOptions = {}): Promise<Service> {
  const main = ctx.config.cluster.role === 'main';
  const runsEngine = options.engine !== false && !main;
  // The main node still fails the tasks no machine of the cluster fits, and notes those that wait, in
  // case no worker is there to do it.
  const noted = new Set<number>();
  const node = new NodeRegistry(ctx, main ? () => triageOnMain(ctx, noted) : undefined);
  await node.start();
  const app = await buildServer(ctx, { onExit: options.onExit });
  await registerWeb(app, ctx);
  const scheduler = runsEngine ? await createScheduler(ctx, options.pollMs) : undefined;
  await scheduler?.start();
  const backfill = startSearchBackfill(ctx);
  // The main node (or a single host) drives the remote nodes added through Cuckoo's distributed API.
  const remoteNodes = ctx.config.cluster.role === 'worker' ? undefined : new RemoteNodeDriver(ctx);
  remoteNodes?.start();
  return {
    app,
    scheduler,
    node,
    async close() {
      await remoteNodes?.stop();
      await scheduler?.stop();
      await node.stop();
      await backfill.stop();
      await app.close();
    },
  };
}

async function triageOnMain(ctx: AppContext, noted: Set<number>): Promise<void> {
  const { triageQueue } = await import('./scheduler/queue-triage.js');
  await triageQueue(ctx, noted);
}

/** The engine's modules load only on nodes that run analyses, which keeps API-only nodes small. */
async function createScheduler(ctx: AppContext, pollMs: number | undefined): Promise<Scheduler> {
  const [{ machineryResolver }, { processTask }, { Scheduler }] = await Promise.all([
    import('./machinery/registry.js'),
    import('./pipeline/process-task.js'),
    import('./scheduler/scheduler.js'),
  ]);
  const machineryFor = await machineryResolver(ctx.config, ctx.log.child({ component: 'machinery' }));
  return new Scheduler(ctx, { machineryFor, processTask: (taskId) => processTask(ctx, taskId), pollMs });
}
