import type { FastifyInstance } from 'fastify';
import { buildServer } from './api/server.js';
import type { AppContext } from './app.js';
import { machineryResolver } from './machinery/registry.js';
import { processTask } from './processing/pipeline.js';
import { Scheduler } from './scheduler/scheduler.js';

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

/** The whole nestbox node: the REST API and, unless disabled, the analysis engine behind it. */
export async function createService(ctx: AppContext, options: ServiceOptions = {}): Promise<Service> {
  const app = await buildServer(ctx, { onExit: options.onExit });
  const scheduler = options.engine === false ? undefined : createScheduler(ctx, options.pollMs);
  await scheduler?.start();
  return {
    app,
    scheduler,
    async close() {
      await scheduler?.stop();
      await app.close();
    },
  };
}

function createScheduler(ctx: AppContext, pollMs: number | undefined): Scheduler {
  const machineryFor = machineryResolver(ctx.config, ctx.log.child({ component: 'machinery' }));
  return new Scheduler(ctx, { machineryFor, processTask: (taskId) => processTask(ctx, taskId), pollMs });
}
