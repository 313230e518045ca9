import { existsSync } from 'node:fs';
import type { AppContext } from '../app.js';
import { conflict, internal, notFound } from '../errors.js';
import { buildCallsIndex } from '../report/calls-index.js';
import { CallsIndex } from '../report/calls-index-query.js';

/**
 * A reported task's calls index, opened for one request. Tasks reported before indexes existed (or whose
 * index could not be written) get theirs built on the first request; requests that come meanwhile wait for
 * that one build.
 */
export class TaskCalls {
  readonly #building = new Map<number, Promise<void>>();

  constructor(private readonly ctx: AppContext) {}

  /** Runs `read` on the task's index and closes it. */
  async read<T>(taskId: number, read: (index: CallsIndex) => T): Promise<T> {
    const index = await this.#open(taskId);
    try {
      return read(index);
    } finally {
      index.close();
    }
  }

  async #open(taskId: number): Promise<CallsIndex> {
    const task = await this.ctx.stores.tasks.get(taskId);
    if (!task) throw notFound('Task not found', { context: { taskId } });
    const paths = this.ctx.layout.analysis(taskId);
    const ready = CallsIndex.open(paths.callsIndex);
    if (ready) return ready;
    if (task.status !== 'reported' || !existsSync(paths.reportJson)) {
      throw conflict(`Task ${taskId} is ${task.status}: its calls are listed once it is reported`, { context: { taskId } });
    }
    await this.#build(taskId);
    const built = CallsIndex.open(paths.callsIndex);
    if (!built) throw internal(`the calls index of task ${taskId} could not be built`, { context: { taskId } });
    return built;
  }

  #build(taskId: number): Promise<void> {
    const running = this.#building.get(taskId);
    if (running) return running;
    const build = buildCallsIndex(this.ctx.layout.analysis(taskId)).finally(() => this.#building.delete(taskId));
    this.#building.set(taskId, build);
    return build;
  }
}
