import { hostname } from 'node:os';
import type { AppContext } from '../app.js';
import type { MachineRow, TaskRow } from '../db/schema.js';
import type { Machinery } from '../machinery/types.js';
import { nowIso } from '../util/time.js';
import { describeWish, machineFits, wishOf } from './matching.js';
import { type AnalysisOutcome, runAnalysis } from './run-analysis.js';

export interface SchedulerOptions {
  /** The machinery that runs machines of a kind; throws for kinds this node cannot run. */
  machineryFor: (kind: string) => Machinery;
  /** Turns a completed task's raw results into reports (completed -> reported). */
  processTask?: (taskId: number) => Promise<void>;
  /** How often the queue is looked at when nothing wakes the scheduler, in ms. */
  pollMs?: number;
}

/**
 * Takes pending tasks by priority (higher first) then age, runs each on a free machine that fits, and
 * records the outcome. As many analyses run at once as there are free machines. Claims are conditional
 * updates in one transaction, so several nodes sharing a database never take the same task or machine.
 */
export class Scheduler {
  private readonly running = new Map<number, Promise<void>>();
  private readonly shutdown = new AbortController();
  private readonly prepared = new Map<string, Promise<void>>();
  private readonly worker = `${hostname()}:${process.pid}`;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private processing: Promise<void> | undefined;

  constructor(
    private readonly ctx: AppContext,
    private readonly options: SchedulerOptions,
  ) {}

  async start(): Promise<void> {
    await this.recover();
    this.timer = setInterval(() => this.wake(), this.options.pollMs ?? 500);
    this.wake();
  }

  /** Looks at the queue now (after a submission, or when a machine is freed). */
  wake(): void {
    if (this.shutdown.signal.aborted) return;
    this.ticking ??= this.tick()
      .catch((error) => this.ctx.log.error({ err: error }, 'scheduler tick failed'))
      .finally(() => (this.ticking = undefined));
    this.processing ??= this.processCompleted()
      .catch((error) => this.ctx.log.error({ err: error }, 'processing loop failed'))
      .finally(() => (this.processing = undefined));
  }

  /** Stops taking tasks, interrupts running analyses (their tasks go back to the queue) and waits. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.shutdown.abort();
    await Promise.allSettled([this.ticking, this.processing, ...this.running.values()]);
    // What machineries keep ready between tasks (a spare network, a waiting tracer) must not outlive the service.
    for (const kind of this.prepared.keys()) {
      await this.machinery(kind)?.close?.().catch((error: Error) => this.ctx.log.error({ err: error, kind }, 'closing the machinery failed'));
    }
  }

  /** Tasks a crash left running go back to the queue (or fail, by configuration); no machine stays locked. */
  async recover(): Promise<void> {
    const { stores, config, log } = this.ctx;
    const orphans = (await stores.tasks.list({ status: 'running' })).filter((task) => !this.pinnedElsewhere(task));
    for (const task of orphans) {
      if (config.tasks.reschedule_on_crash) {
        await stores.tasks.transition(task.id, ['running'], 'pending', { started_on: null });
        await stores.tasks.addError(task.id, 'The analysis was interrupted by a restart of nestbox and was queued again', 'recovered');
      } else {
        await stores.tasks.transition(task.id, ['running'], 'failed_analysis', { completed_on: nowIso() });
        await stores.tasks.addError(task.id, 'The analysis was interrupted by a restart of nestbox');
      }
      log.warn({ task: task.id }, 'recovered a task left running by a crash');
    }
    await stores.guests.stopAllUnfinished();
    await stores.machines.unlockAll();
    for (const kind of new Set(config.machines.map((m) => m.kind))) {
      await this.machinery(kind)?.cleanupStale().catch((error: Error) => log.error({ err: error, kind }, 'cleanup of stale machines failed'));
    }
  }

  private async tick(): Promise<void> {
    const machines = await this.ctx.stores.machines.list();
    const free = machines.filter((machine) => machine.locked === 0);
    const pending = await this.ctx.stores.tasks.queue(100, this.nodeName());
    for (const task of pending) {
      if (this.shutdown.signal.aborted) return;
      const wish = wishOf(task);
      if (!machines.some((machine) => machineFits(machine, wish))) {
        await this.failUnrunnable(task, `No configured machine matches ${describeWish(wish)}`);
        continue;
      }
      const index = free.findIndex((machine) => machineFits(machine, wish));
      if (index < 0) continue;
      const [machine] = free.splice(index, 1) as [MachineRow];
      await this.claimAndRun(task, machine);
    }
  }

  /**
   * A task pinned to (or held by) another node is that node's (the queue leaves such tasks out too): a
   * remote node added through Cuckoo's distributed API (the main node hands it over, cluster/remote/),
   * or another nestbox node.
   */
  private pinnedElsewhere(task: TaskRow): boolean {
    return task.node !== null && task.node !== this.nodeName();
  }

  /** This node's name in the cluster (cluster.node_name, or the host's name). */
  private nodeName(): string {
    return this.ctx.config.cluster.node_name || hostname();
  }

  private async failUnrunnable(task: TaskRow, reason: string): Promise<void> {
    const failed = await this.ctx.stores.tasks.transition(task.id, ['pending'], 'failed_analysis', { completed_on: nowIso() });
    if (failed) await this.ctx.stores.tasks.addError(task.id, reason);
  }

  private async claimAndRun(task: TaskRow, machine: MachineRow): Promise<void> {
    const machinery = this.machinery(machine.kind);
    if (!machinery) {
      await this.failUnrunnable(task, `Machine ${machine.name} is of kind "${machine.kind}", which this node cannot run`);
      return;
    }
    const guestId = await this.claim(task, machine, machinery.manager);
    if (guestId === undefined) return;
    const claimed = { ...task, status: 'running' as const };
    const done = this.runClaimed(claimed, machine, machinery, guestId).finally(() => {
      this.running.delete(task.id);
      this.wake();
    });
    this.running.set(task.id, done);
  }

  /** Moves the task to running and locks the machine, both or neither. */
  private async claim(task: TaskRow, machine: MachineRow, manager: string): Promise<number | undefined> {
    const { stores } = this.ctx;
    return stores.transaction(async (trx) => {
      if (!(await stores.machines.lock(machine.id, trx))) return undefined;
      if (!(await stores.tasks.transition(task.id, ['pending'], 'running', { started_on: nowIso() }, trx))) {
        await stores.machines.unlock(machine.id, trx);
        return undefined;
      }
      return stores.guests.create(task.id, machine, manager, trx);
    });
  }

  private async runClaimed(task: TaskRow, machine: MachineRow, machinery: Machinery, guestId: number): Promise<void> {
    const { stores, log } = this.ctx;
    let outcome: AnalysisOutcome;
    try {
      await this.prepare(machinery);
      outcome = await runAnalysis(this.ctx, { task, machine, guestId, machinery, shutdown: this.shutdown.signal });
    } catch (error) {
      outcome = { state: 'failed', reason: (error as Error).message };
    }
    try {
      await this.record(task, outcome);
    } finally {
      await stores.machines.unlock(machine.id);
    }
    log.info({ task: task.id, machine: machine.name, outcome: outcome.state }, 'analysis finished');
  }

  private async record(task: TaskRow, outcome: AnalysisOutcome): Promise<void> {
    const { tasks } = this.ctx.stores;
    if (outcome.state === 'completed') {
      await tasks.transition(task.id, ['running'], 'completed', { completed_on: nowIso(), route: outcome.route });
      for (const warning of outcome.warnings) await tasks.addError(task.id, warning);
    } else if (outcome.state === 'failed') {
      await tasks.transition(task.id, ['running'], 'failed_analysis', { completed_on: nowIso() });
      await tasks.addError(task.id, outcome.reason);
    } else {
      await tasks.transition(task.id, ['running'], 'pending', { started_on: null });
      await tasks.addError(task.id, 'The analysis was interrupted by a shutdown of nestbox and was queued again', 'recovered');
    }
  }

  /** Runs processing for completed tasks no worker has claimed, one at a time. */
  private async processCompleted(): Promise<void> {
    const processTask = this.options.processTask;
    if (!processTask) return;
    for (;;) {
      if (this.shutdown.signal.aborted) return;
      const taskId = await this.ctx.stores.tasks.claimForProcessing(this.worker);
      if (taskId === undefined) return;
      try {
        await processTask(taskId);
      } catch (error) {
        this.ctx.log.error({ err: error, task: taskId }, 'processing failed');
      }
    }
  }

  private machinery(kind: string): Machinery | undefined {
    try {
      return this.options.machineryFor(kind);
    } catch {
      return undefined;
    }
  }

  private prepare(machinery: Machinery): Promise<void> {
    let prepared = this.prepared.get(machinery.kind);
    if (!prepared) {
      prepared = machinery.prepare();
      // A failed preparation is retried by the next task rather than remembered forever.
      prepared.catch(() => this.prepared.delete(machinery.kind));
      this.prepared.set(machinery.kind, prepared);
    }
    return prepared;
  }
}
