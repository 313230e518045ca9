import type { FastifyInstance } from 'fastify';
import { buildServer } from './api/server.js';
import type { AppContext } from './app.js';
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
  /** Stops the engine (running analyses go back to the queue), then the API. */
  close(): Promise<void>;
}

/** The whole nestbox node: the REST API, the web interface and, unless disabled, the analysis engine behind it. */
export async function createService(ctx: AppContext, options: ServiceOptions = {}): Promise<Service> {
  const app = await buildServer(ctx, { onExit: options.onExit });
  await registerWeb(app, ctx);
  const scheduler = options.engine === false ? undefined : await createScheduler(ctx, options.pollMs);
  await scheduler?.start();
  const backfill = startSearchBackfill(ctx);
  // The main node (or a single host) drives the remote nodes added through Cuckoo's distributed API.
  const remoteNodes = ctx.config.cluster.role === 'worker' ? undefined : new RemoteNodeDriver(ctx);
  remoteNodes?.start();
  return {
    app,
    scheduler,
    async close() {
      await remoteNodes?.stop();
      await scheduler?.stop();
      await backfill.stop();
      await app.close();
    },
  };
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
