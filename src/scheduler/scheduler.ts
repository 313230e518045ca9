import { hostname } from 'node:os';
import type { AppContext } from '../app.js';
import { ChangeListener } from '../db/change-listener.js';
import { TASK_PENDING_CHANNEL } from '../db/migrations/0007-task-claims.js';
import type { MachineRow, TaskRow } from '../db/schema.js';
import type { Machinery } from '../machinery/types.js';
import { nowIso } from '../util/time.js';
import { machineMatcher, wishOf } from './matching.js';
import { failUnrunnable, triageQueue } from './queue-triage.js';
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
 * Takes pending tasks by priority (higher first) then age, runs each on a free machine of this node that
 * fits, and records the outcome. As many analyses run at once as there are free machines. On PostgreSQL
 * a claim is one transaction with FOR UPDATE SKIP LOCKED (db/task-claims.ts), and a notification wakes
 * the scheduler as soon as a task becomes pending; on SQLite claims are conditional updates.
 */
export class Scheduler {
  private readonly running = new Map<number, Promise<void>>();
  /** Per running task: stops its analysis when the task is no longer this node's (see dropLostRuns). */
  private readonly runAborts = new Map<number, AbortController>();
  /** Machines this node runs an analysis on, whatever the table says (another node may have unlocked them). */
  private readonly busyMachines = new Set<number>();
  private readonly shutdown = new AbortController();
  private readonly prepared = new Map<string, Promise<void>>();
  private readonly worker = `${hostname()}:${process.pid}`;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private tickAgain = false;
  private processing: Promise<void> | undefined;
  private pendingListener: ChangeListener | undefined;
  /** Tasks whose waiting for a node that is down is noted in their errors already. */
  private readonly notedWaiting = new Set<number>();

  constructor(
    private readonly ctx: AppContext,
    private readonly options: SchedulerOptions,
  ) {}

  async start(): Promise<void> {
    await this.recover();
    if (this.ctx.databaseKind === 'postgres') {
      this.pendingListener = new ChangeListener(this.ctx.config.database.connection, TASK_PENDING_CHANNEL, () => this.wake());
      await this.pendingListener.start();
    }
    this.timer = setInterval(() => this.wake(), this.options.pollMs ?? 500);
    this.wake();
  }

  /** Looks at the queue now (after a submission, or when a machine is freed). */
  wake(): void {
    if (this.shutdown.signal.aborted) return;
    if (this.ticking) this.tickAgain = true;
    this.ticking ??= this.tickWhileWoken()
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
    await this.pendingListener?.close();
    await Promise.allSettled([this.ticking, this.processing, ...this.running.values()]);
    // What machineries keep ready between tasks (a spare network, a waiting tracer) must not outlive the service.
    for (const kind of this.prepared.keys()) {
      await this.machinery(kind)?.close?.().catch((error: Error) => this.ctx.log.error({ err: error, kind }, 'closing the machinery failed'));
    }
  }

  /**
   * This node's tasks that a crash left running go back to the queue (or fail, by configuration), and
   * none of its machines stays locked. Other nodes' tasks and machines are theirs: a node that died is
   * recovered by the others when its lease expires (cluster/node-registry.ts).
   */
  async recover(): Promise<void> {
    const { stores, config, log, node } = this.ctx;
    for (const task of await stores.tasks.runningOwned(node)) {
      // Another node may have requeued it meanwhile (this node's lease expired): then it is theirs to note.
      if (config.tasks.reschedule_on_crash) {
        if (await stores.tasks.transition(task.id, ['running'], 'pending', { started_on: null, node: null })) {
          await stores.tasks.addError(task.id, 'The analysis was interrupted by a restart of nestbox and was queued again', 'recovered');
        }
      } else if (await stores.tasks.transition(task.id, ['running'], 'failed_analysis', { completed_on: nowIso() })) {
        await stores.tasks.addError(task.id, 'The analysis was interrupted by a restart of nestbox');
      }
      log.warn({ task: task.id }, 'recovered a task left running by a crash');
    }
    await stores.guests.stopUnfinishedOn(await stores.machines.namesOwned(node));
    await stores.machines.unlockOwned(node);
    for (const kind of new Set(config.machines.map((m) => m.kind))) {
      await this.machinery(kind)?.cleanupStale().catch((error: Error) => log.error({ err: error, kind }, 'cleanup of stale machines failed'));
    }
  }

  /** A wake-up during a tick is not lost: the tick runs again. */
  private async tickWhileWoken(): Promise<void> {
    do {
      this.tickAgain = false;
      await this.tick();
    } while (this.tickAgain && !this.shutdown.signal.aborted);
  }

  private async tick(): Promise<void> {
    if (this.ctx.databaseKind === 'sqlite') return this.claimFromQueue(await triageQueue(this.ctx));
    // Claiming first keeps a woken worker's claim one statement away from the notification.
    await this.claimWhileFree();
    await triageQueue(this.ctx, this.notedWaiting);
    await this.dropLostRuns();
  }

  /**
   * Stops the analyses of tasks another node took back: this node's lease expired while it ran them (its
   * heartbeat could not reach the database), and they were requeued. Their outcome is not recorded.
   */
  private async dropLostRuns(): Promise<void> {
    if (this.runAborts.size === 0) return;
    const ours = await this.ctx.stores.tasks.stillRunningOn(this.ctx.node.node, [...this.runAborts.keys()]);
    for (const [taskId, abort] of this.runAborts) {
      if (ours.has(taskId) || abort.signal.aborted) continue;
      this.ctx.log.warn({ task: taskId }, "stopping an analysis: the task was requeued after this node's lease expired");
      abort.abort();
    }
  }

  /** PostgreSQL: claims until no free machine of this node fits a pending task. */
  private async claimWhileFree(): Promise<void> {
    const managers = this.managers();
    for (;;) {
      if (this.shutdown.signal.aborted) return;
      const claim = await this.ctx.stores.tasks.claimNext({
        node: this.ctx.node.node,
        unassignedMachines: this.ctx.node.unassigned,
        busyMachineIds: [...this.busyMachines],
        managers,
      });
      if (!claim) return;
      this.startRun(claim.task, claim.machine, this.machinery(claim.machine.kind)!, claim.guestId);
    }
  }

  /** The kinds of this node's machines that it can run, with their guest managers' names. */
  private managers(): Map<string, string> {
    const managers = new Map<string, string>();
    for (const kind of new Set(this.ctx.config.machines.map((machine) => machine.kind))) {
      const machinery = this.machinery(kind);
      if (machinery) managers.set(kind, machinery.manager);
    }
    return managers;
  }

  /** SQLite (one host): runs queued tasks on free machines that fit, claiming each with conditional updates. */
  private async claimFromQueue(runnable: TaskRow[]): Promise<void> {
    const { machines } = this.ctx.stores;
    // Whether a machine fits depends on the others too (a Windows machine takes platform=windows from Wine).
    const fits = machineMatcher(await machines.list());
    const free = (await machines.listOwned(this.ctx.node)).filter((machine) => machine.locked === 0 && !this.busyMachines.has(machine.id));
    for (const task of runnable) {
      if (this.shutdown.signal.aborted) return;
      const index = free.findIndex((machine) => fits(machine, wishOf(task)));
      if (index < 0) continue;
      const [machine] = free.splice(index, 1) as [MachineRow];
      await this.claimAndRun(task, machine);
    }
  }

  private async claimAndRun(task: TaskRow, machine: MachineRow): Promise<void> {
    const machinery = this.machinery(machine.kind);
    if (!machinery) {
      await failUnrunnable(this.ctx, task, `Machine ${machine.name} is of kind "${machine.kind}", which this node cannot run`);
      return;
    }
    const guestId = await this.claim(task, machine, machinery.manager);
    if (guestId === undefined) return;
    this.startRun({ ...task, status: 'running', node: this.ctx.node.node }, machine, machinery, guestId);
  }

  private startRun(task: TaskRow, machine: MachineRow, machinery: Machinery, guestId: number): void {
    this.busyMachines.add(machine.id);
    const abort = new AbortController();
    this.runAborts.set(task.id, abort);
    const done = this.runClaimed(task, machine, machinery, guestId, abort.signal).finally(() => {
      this.running.delete(task.id);
      this.runAborts.delete(task.id);
      this.busyMachines.delete(machine.id);
      this.wake();
    });
    this.running.set(task.id, done);
  }

  /** Moves the task to running on this node and locks the machine, both or neither. */
  private async claim(task: TaskRow, machine: MachineRow, manager: string): Promise<number | undefined> {
    const { stores, node } = this.ctx;
    return stores.transaction(async (trx) => {
      if (!(await stores.machines.lock(machine.id, trx))) return undefined;
      if (!(await stores.tasks.transition(task.id, ['pending'], 'running', { started_on: nowIso(), node: node.node }, trx))) {
        await stores.machines.unlock(machine.id, trx);
        return undefined;
      }
      return stores.guests.create(task.id, machine, manager, trx);
    });
  }

  private async runClaimed(task: TaskRow, machine: MachineRow, machinery: Machinery, guestId: number, lost: AbortSignal): Promise<void> {
    const { stores, log } = this.ctx;
    let outcome: AnalysisOutcome;
    try {
      await this.prepare(machinery);
      const shutdown = AbortSignal.any([this.shutdown.signal, lost]);
      outcome = await runAnalysis(this.ctx, { task, machine, guestId, machinery, shutdown });
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

  /** Records the outcome, unless the task is no longer this node's (its lease expired and another node requeued it). */
  private async record(task: TaskRow, outcome: AnalysisOutcome): Promise<void> {
    const { tasks } = this.ctx.stores;
    const node = this.ctx.node.node;
    let recorded: boolean;
    if (outcome.state === 'completed') {
      recorded = await tasks.finishRun(task.id, node, 'completed', { completed_on: nowIso(), route: outcome.route });
      for (const warning of recorded ? outcome.warnings : []) await tasks.addError(task.id, warning);
    } else if (outcome.state === 'failed') {
      recorded = await tasks.finishRun(task.id, node, 'failed_analysis', { completed_on: nowIso() });
      if (recorded) await tasks.addError(task.id, outcome.reason);
    } else {
      recorded = await tasks.finishRun(task.id, node, 'pending', { started_on: null, node: null });
      if (recorded) await tasks.addError(task.id, 'The analysis was interrupted by a shutdown of nestbox and was queued again', 'recovered');
    }
    if (!recorded) this.ctx.log.warn({ task: task.id }, 'the task was requeued by another node while this node ran it; its outcome is dropped');
  }

  /** Runs processing for completed tasks this node ran and no worker has claimed, one at a time. */
  private async processCompleted(): Promise<void> {
    const processTask = this.options.processTask;
    if (!processTask) return;
    for (;;) {
      if (this.shutdown.signal.aborted) return;
      const taskId = await this.ctx.stores.tasks.claimForProcessing(this.worker, this.ctx.node);
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
