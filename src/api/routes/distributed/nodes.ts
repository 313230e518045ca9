import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../../app.js';
import { RemoteNodeClient } from '../../../cluster/remote/client.js';
import { wakeRemoteNodes } from '../../../cluster/remote/driver.js';
import { remoteMachinesOf, type RemoteMachine } from '../../../db/distributed-nodes.js';
import { decodeList } from '../../../db/json-columns.js';
import type { MachineRow, NodeRow } from '../../../db/schema.js';
import { conflict, invalidInput, notFound } from '../../../errors.js';
import { type FormFields, parseInteger } from '../../form-fields.js';
import { isHttpUrl } from '../../web-address.js';
import { queryParam, stringParam } from '../../params.js';
import type { Registrar } from '../registrar.js';
import { withFieldForm } from '../../received-forms.js';
import { distributedPaths } from '../../distributed/paths.js';

/** Nodes (cuckoo-compat §7.2): list, view, add, update, refresh, disable. */
export function nodeRoutes(r: Registrar, ctx: AppContext): void {
  r.routes(distributedPaths('/node'), {
    GET: async (request, reply) => {
      const nodes = await ctx.stores.distributedNodes.list();
      // A Buffer, so that the API's JSON serializer leaves this plain text alone.
      if (queryParam(request, 'mode') === 'workers') return reply.type('text/html; charset=utf-8').send(Buffer.from(workerNames(nodes)));
      return { success: true, nodes: await nodesJson(ctx, nodes) };
    },
    POST: (request, reply) => withFieldForm(ctx, request, reply, (fields) => addNode(ctx, fields)),
  });

  r.routes(distributedPaths('/node/:name'), {
    GET: async (request) => {
      const node = await ctx.stores.distributedNodes.get(stringParam(request, 'name'));
      return { success: true, nodes: await nodesJson(ctx, node ? [node] : []) };
    },
    PUT: (request, reply) => withFieldForm(ctx, request, reply, (fields) => updateNode(ctx, request, fields)),
    DELETE: async (request) => {
      const node = await existingNode(ctx, request);
      await ctx.stores.distributedNodes.update(node.name, { enabled: 0 });
      return { success: true };
    },
  });

  r.routes(distributedPaths('/node/:name/refresh'), {
    POST: async (request) => {
      const node = await existingNode(ctx, request);
      if (node.role !== 'remote') return { success: true, machines: ((await ctx.stores.distributedNodes.machinesByNode()).get(node.name) ?? []).map(ownMachineJson) };
      const machines = await readMachines(node);
      await ctx.stores.distributedNodes.update(node.name, { machines: JSON.stringify(machines.map(remoteMachine)) });
      return { success: true, machines };
    },
  });
}

/** `?mode=workers`: the enabled nodes' names, sorted, separated by spaces. */
function workerNames(nodes: readonly NodeRow[]): string {
  return nodes
    .filter((node) => node.enabled === 1)
    .map((node) => node.name)
    .sort()
    .join(' ');
}

async function nodesJson(ctx: AppContext, nodes: readonly NodeRow[]) {
  const own = nodes.some((node) => node.role !== 'remote') ? await ctx.stores.distributedNodes.machinesByNode() : new Map<string, MachineRow[]>();
  const entries = nodes.map((node) => {
    const machines = node.role === 'remote' ? remoteMachinesOf(node) : (own.get(node.name) ?? []).map(ownMachineJson);
    // Never the token.
    return [node.name, { enabled: node.enabled === 1, machines, mode: node.mode, name: node.name, url: node.url }] as const;
  });
  return Object.fromEntries(entries);
}

function ownMachineJson(machine: MachineRow): RemoteMachine {
  return { name: machine.name, platform: machine.platform, tags: decodeList(machine.tags) };
}

async function addNode(ctx: AppContext, fields: FormFields) {
  const name = fields.get('name');
  if (name === undefined) throw notFound('Missing node name');
  checkName(name);
  const url = addressOf(fields);
  if (url === undefined) throw notFound('Missing IP address or direct URL');
  if (await ctx.stores.distributedNodes.nameTaken(name)) throw conflict('There is already a node with this name');
  const token = fields.get('token') ?? null;
  const machines = await readMachines({ name, url, token });
  // A node added by another request meanwhile makes the insert fail on the unique name.
  await ctx.stores.distributedNodes
    .addRemote({ name, url, token, mode: fields.get('mode') ?? 'normal', machines: machines.map(remoteMachine) })
    .catch(async (error: unknown) => {
      if (await ctx.stores.distributedNodes.nameTaken(name)) throw conflict('There is already a node with this name');
      throw error;
    });
  wakeRemoteNodes(ctx);
  return { success: true, machines };
}

async function updateNode(ctx: AppContext, request: FastifyRequest, fields: FormFields) {
  const node = await existingNode(ctx, request);
  const name = fields.get('name');
  const url = addressOf(fields);
  // Cuckoo reads `enabled` as an integer (a 500 for anything else); any integer but 0 enables.
  const enabled = parseInteger(fields, 'enabled', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
  // Not in Cuckoo (its master sends no token): a remote node's new token, when it changes its own.
  const token = fields.get('token');
  if (node.role !== 'remote' && ((name !== undefined && name !== node.name) || url !== undefined || token !== undefined)) {
    throw invalidInput(`Node ${node.name} is a nestbox node of this cluster: it registers its own name and address, and uses the cluster's credential`);
  }
  if (name !== undefined && name !== node.name) {
    checkName(name);
    if (await ctx.stores.distributedNodes.nameTaken(name)) throw conflict('There is already a node with this name');
    await ctx.stores.distributedNodes.rename(node.name, name);
  }
  await ctx.stores.distributedNodes.update(name ?? node.name, {
    ...(url === undefined ? {} : { url }),
    ...(token === undefined ? {} : { token }),
    ...(enabled === undefined ? {} : { enabled: enabled === 0 ? 0 : 1 }),
  });
  wakeRemoteNodes(ctx);
  return { success: true };
}

async function existingNode(ctx: AppContext, request: FastifyRequest): Promise<NodeRow> {
  const node = await ctx.stores.distributedNodes.get(stringParam(request, 'name'));
  if (!node) throw notFound('No such node');
  return node;
}

/** `ip` wins over `url` and means Cuckoo's API port on that address, as in Cuckoo. */
function addressOf(fields: FormFields): string | undefined {
  const ip = fields.get('ip');
  if (ip !== undefined) {
    const url = `http://${ip.includes(':') && !ip.startsWith('[') ? `[${ip}]` : ip}:8090/`;
    if (!isHttpUrl(url)) throw invalidInput(`ip must be an IP address or host name; got ${JSON.stringify(ip)}`);
    return url;
  }
  const url = fields.get('url');
  if (url !== undefined && !isHttpUrl(url)) throw invalidInput(`url must be an http:// or https:// URL; got ${JSON.stringify(url)}`);
  return url;
}

/** A node is addressed as /api/node/<name>, so its name must be one path segment. */
function checkName(name: string): void {
  if (name.length > 255 || /[/\\\0\s]/.test(name) || name === '.' || name === '..') {
    throw invalidInput(`A node name must be one word of at most 255 characters without slashes; got ${JSON.stringify(name)}`);
  }
}

async function readMachines(node: { name: string; url: string; token: string | null }) {
  try {
    return await new RemoteNodeClient(node).machines();
  } catch (error) {
    throw notFound(`Error connecting to Cuckoo node: ${(error as Error).message}`, { cause: error });
  }
}

/** What is kept of a node's machine object: name, platform, tags. */
function remoteMachine(machine: Record<string, unknown>): RemoteMachine {
  return {
    name: String(machine.name ?? ''),
    platform: String(machine.platform ?? ''),
    tags: Array.isArray(machine.tags) ? machine.tags.map(String) : [],
  };
}
