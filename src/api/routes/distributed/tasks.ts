import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../../app.js';
import { wakeRemoteNodes } from '../../../cluster/remote/driver.js';
import { remoteMachinesOf } from '../../../db/distributed-nodes.js';
import type { DistributedTaskFilter } from '../../../db/distributed-tasks.js';
import { encodeList } from '../../../db/json-columns.js';
import type { NodeRow, TaskStatus } from '../../../db/schema.js';
import { invalidInput, isNestboxError, notFound } from '../../../errors.js';
import { describeWish, fleetOf, machineFits, runsUnderWine } from '../../../scheduler/matching.js';
import { type MachineSelection, type TaskCreation, type TaskParams, wishOfParams } from '../../../tasks/create.js';
import { deleteTask } from '../../../tasks/lifecycle.js';
import { FormFields, parseBoolean, parseInteger, parseTaskParams } from '../../form-fields.js';
import { idParam, INT, queryParam } from '../../params.js';
import type { Registrar } from '../registrar.js';
import { type ReceivedForm, withFieldForm, withFileForm } from '../../received-forms.js';
import { wasDeleted } from '../../distributed/deleted.js';
import { distributedPaths } from '../../distributed/paths.js';
import { DIST_STATUS_FILTERS, DIST_STATUSES, type DistStatus, ENDED, listedTaskJson, viewedTaskJson } from '../../distributed/task-json.js';

/** Tasks (cuckoo-compat §7.2): list with filters, create, view, delete one or several. */
export function distributedTaskRoutes(r: Registrar, ctx: AppContext, creation: TaskCreation): void {
  r.routes(distributedPaths('/task'), {
    GET: async (request) => {
      const tasks = await ctx.stores.distributedTasks.list(listFilterOf(request));
      const nodeIds = await nodeIdsOf(ctx);
      return { success: true, tasks: Object.fromEntries(tasks.map((task) => [String(task.id), listedTaskJson(task, nodeIds)])) };
    },
    POST: (request, reply) => withFileForm(ctx, request, reply, (form) => createTask(ctx, creation, form)),
  });

  r.routes(distributedPaths(`/task/${INT('task_id')}`), {
    GET: async (request) => {
      const taskId = idParam(request, 'task_id');
      const task = await ctx.stores.tasks.get(taskId);
      if (task) return { success: true, tasks: { [String(taskId)]: viewedTaskJson(task, await nodeIdsOf(ctx)) } };
      // A deleted task has no row left; its id and state are what remains of it.
      if (await wasDeleted(ctx, taskId)) return { success: true, tasks: { [String(taskId)]: { id: taskId, status: 'deleted' } } };
      throw notFound('Task not found');
    },
    DELETE: async (request) => removeTask(ctx, idParam(request, 'task_id')),
  });

  r.routes(distributedPaths('/tasks'), {
    DELETE: (request, reply) =>
      withFieldForm(ctx, request, reply, async (fields) => {
        for (const taskId of taskIdsOf(fields)) {
          // As in Cuckoo, one task that cannot be deleted does not stop the others.
          await removeTask(ctx, taskId).catch((error: unknown) => ctx.log.info({ err: error, task: taskId }, 'a task of DELETE /api/tasks was not deleted'));
        }
        return { success: true };
      }),
  });
}

/** Query `offset`, `limit`, `status`, `owner`, `priority` and the deprecated `finished`. */
function listFilterOf(request: FastifyRequest): DistributedTaskFilter {
  const query = new FormFields();
  for (const name of ['offset', 'limit', 'status', 'owner', 'priority', 'finished']) query.add(name, queryParam(request, name) ?? '');
  const status = query.get('status');
  const finished = parseBoolean(query, 'finished');
  if (finished !== undefined && status !== undefined) throw invalidInput('Do not combine finished and status. Finished has been deprecated.');
  if (status !== undefined && !(DIST_STATUSES as readonly string[]).includes(status)) {
    throw invalidInput(`status must be one of ${DIST_STATUSES.join(', ')}; got ${JSON.stringify(status)}`);
  }
  const unfinished: TaskStatus[] = ['pending', 'running', 'completed'];
  return {
    ...(status === undefined ? {} : DIST_STATUS_FILTERS[status as DistStatus]),
    ...(finished === undefined ? {} : { statuses: finished ? ENDED : unfinished }),
    offset: parseInteger(query, 'offset', 0, Number.MAX_SAFE_INTEGER),
    limit: parseInteger(query, 'limit', 0, Number.MAX_SAFE_INTEGER),
    priority: parseInteger(query, 'priority', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER),
    owner: query.get('owner'),
  };
}

async function nodeIdsOf(ctx: AppContext): Promise<Map<string, number>> {
  return new Map((await ctx.stores.distributedNodes.list()).map((node) => [node.name, node.id]));
}

async function createTask(ctx: AppContext, creation: TaskCreation, form: ReceivedForm) {
  const file = form.files[0];
  if (!file) throw notFound('No file has been provided');
  if (file.hashes.size === 0) throw notFound('Provided file is empty');
  const params = parseTaskParams(form.fields, ctx.config);
  const named = form.fields.get('node');
  const placement = named === undefined ? await hereOrOnlyFittingRemote(ctx, creation, params) : await pinnableNode(ctx, named, params);
  const taskId = await creation.createFileTask(file, params, { unique: false, selection: placement.selection });
  if (placement.node?.role === 'remote') wakeRemoteNodes(ctx);
  return { success: true, task_id: taskId };
}

/** Where a created task goes: the node it is pinned to, if any, and how it runs there. */
interface Placement {
  node?: NodeRow;
  selection: MachineSelection;
}

/** The node a task names: it must exist, be enabled, and have a machine the task fits. */
async function pinnableNode(ctx: AppContext, name: string, params: TaskParams): Promise<Placement> {
  const node = await ctx.stores.distributedNodes.get(name);
  if (!node || node.enabled !== 1) throw notFound('Node not found');
  const selection = await selectionOn(ctx, node, params);
  if (!selection) throw invalidInput(`Node ${node.name} has no machine for ${describeWish(wishOfParams(params))}, so the task could never run there`);
  return { node, selection };
}

/**
 * A task that names no node runs on this cluster's machines; only when none fits it, but the machines of
 * an enabled remote node do, it goes to that node.
 */
async function hereOrOnlyFittingRemote(ctx: AppContext, creation: TaskCreation, params: TaskParams): Promise<Placement> {
  try {
    return { selection: await creation.checkMachineSelection(params) };
  } catch (error) {
    if (!isNestboxError(error, 'invalid_input')) throw error;
    for (const node of await ctx.stores.distributedNodes.remotes()) {
      if (node.enabled !== 1) continue;
      const selection = await selectionOn(ctx, node, params);
      if (selection) return { node, selection };
    }
    throw error;
  }
}

/**
 * How the task runs on the node, or undefined when none of its machines fits it. A remote node is a
 * cluster of its own; this cluster's nodes share its machines' fleet (a Windows machine anywhere in it
 * takes platform=windows from Wine).
 */
async function selectionOn(ctx: AppContext, node: NodeRow, params: TaskParams): Promise<MachineSelection | undefined> {
  const machines = await machinesOf(ctx, node);
  const fleet = fleetOf(node.role === 'remote' ? machines : await ctx.stores.machines.list());
  const wish = wishOfParams(params);
  if (!machines.some((machine) => machineFits(machine, wish, fleet))) return undefined;
  return { node: node.name, underWine: runsUnderWine(wish, fleet) };
}

async function machinesOf(ctx: AppContext, node: NodeRow) {
  if (node.role === 'remote') return remoteMachinesOf(node).map((machine) => ({ ...machine, tags: encodeList(machine.tags) }));
  return (await ctx.stores.distributedNodes.machinesByNode()).get(node.name) ?? [];
}

/** Deletes a task as nestbox's own /tasks/delete does; a second delete answers as Cuckoo's does. */
async function removeTask(ctx: AppContext, taskId: number) {
  if (await wasDeleted(ctx, taskId)) return { message: 'Task already deleted', success: false };
  await deleteTask(ctx, taskId);
  return { success: true };
}

function taskIdsOf(fields: FormFields): number[] {
  const words = fields.text('task_ids').split(/\s+/).filter((word) => word !== '');
  const bad = words.find((word) => !/^\d+$/.test(word));
  if (bad !== undefined) throw invalidInput(`task_ids must be task ids separated by spaces; got ${JSON.stringify(bad)}`);
  return words.map(Number);
}
