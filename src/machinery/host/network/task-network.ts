import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { conflict, invalidInput } from '../../../errors.js';
import type { CreateTaskNetwork, TaskNetwork, TaskNetworkOptions } from '../contracts.js';
import { allocateAddresses, type TaskAddresses } from './addressing.js';
import { startCapture, type Capture } from './capture.js';
import { removeLeftovers } from './cleanup.js';
import { startFakeInternet, type FakeInternet } from './fake-internet.js';
import { gatewayRules, type GatewayRoute } from './gateway-rules.js';
import { GATEWAY_INTERFACE, netnsPath, taskNames, type TaskNames } from './names.js';
import { addNamespaces, deleteNamespaces, drainNamespace, wireNamespaces } from './namespaces.js';
import { claim, release } from './ownership.js';
import { fakeTlsMaterial } from './tls-certificate.js';
import { checkInternetInterface, connectUplink, disconnectUplink, hostResolver } from './uplink.js';

/**
 * One task's network: the machine's namespace, its own gateway namespace (one pair per task, so tasks
 * share nothing and cannot reach each other), the route's rules, the capture and, for inetsim, the fake
 * internet. Whatever fails half-way is undone before the error is thrown.
 *
 * A network can be prepared before its task (prepareTaskNetwork): it is the same fresh network, made
 * while the machine is idle, that no process has used yet; handing it over names where its capture goes.
 */
const ROUTES: readonly GatewayRoute[] = ['inetsim', 'none', 'drop', 'internet'];

export type PrepareOptions = Omit<TaskNetworkOptions, 'pcapPath'>;

/** A task network made ahead of its task: everything but where its capture is written. */
export interface PreparedNetwork {
  readonly id: string;
  readonly route: GatewayRoute;
  /** Gives the network to its task: the capture writes to pcapPath; on failure the network is removed. */
  handOver(pcapPath: string): Promise<TaskNetwork>;
  /** Removes a network no task will use. */
  discard(): Promise<void>;
}

export const createTaskNetwork: CreateTaskNetwork = async (options) => (await prepareTaskNetwork(options)).handOver(options.pcapPath);

export async function prepareTaskNetwork(options: PrepareOptions): Promise<PreparedNetwork> {
  const started = performance.now();
  const route = checkRoute(options);
  const names = taskNames(options.id);
  const claimed = claim(names.id);
  if (claimed === null) {
    throw conflict(`a task network with id ${names.id} is already in use`, { context: { id: names.id } });
  }
  if (claimed === 'reclaimed') await removeLeftovers(names);
  const addresses = allocateAddresses(names.id);
  const parts: Parts = { names, addresses, route, created: false, capture: null, fakeInternet: null };
  try {
    await build(parts, options);
  } catch (error) {
    await teardown(parts, options);
    throw error;
  }
  const setupMs = Math.round(performance.now() - started);
  options.log.info({ id: names.id, route, guest: addresses.guest, setupMs }, 'task network ready');
  let closing: Promise<void> | undefined;
  const close = () => (closing ??= timedTeardown(parts, options.log));
  return {
    id: names.id,
    route,
    async handOver(pcapPath) {
      try {
        parts.capture!.writeTo(pcapPath);
      } catch (error) {
        await close();
        throw error;
      }
      return network(parts, close);
    },
    discard: close,
  };
}

function checkRoute(options: PrepareOptions): GatewayRoute {
  const route = options.route as GatewayRoute;
  if (!ROUTES.includes(route)) {
    throw invalidInput(`unknown route ${JSON.stringify(options.route)}: use one of ${ROUTES.join(', ')}`, {
      context: { route: options.route, id: options.id },
    });
  }
  if (route === 'internet') checkInternetInterface(options.internetInterface);
  return route;
}

interface Parts {
  names: TaskNames;
  addresses: TaskAddresses;
  route: GatewayRoute;
  created: boolean;
  capture: Capture | null;
  fakeInternet: FakeInternet | null;
}

async function build(parts: Parts, options: PrepareOptions): Promise<void> {
  const { names, addresses, route } = parts;
  const tls = route === 'inetsim' ? fakeTlsMaterial() : null;
  // Its failure is reported through `serving` below; this only keeps it from counting as unhandled meanwhile.
  tls?.catch(() => undefined);
  const rules = gatewayRules({ route, gateway: addresses.gateway, resolver: route === 'internet' ? hostResolver() : null });
  parts.created = true;
  await addNamespaces(names);
  // The fake internet (a Node process, the slowest part) starts while the namespaces are wired up.
  const wiredAndCapturing = (async () => {
    await wireNamespaces({ names, addresses, withUplink: route === 'internet', gatewayRules: rules });
    if (route === 'internet') await connectUplink(names, addresses, options.internetInterface);
    parts.capture = await startCapture({ netns: names.gatewayNetns, interfaceName: GATEWAY_INTERFACE, log: options.log });
  })();
  const serving = tls?.then(async (material) => {
    parts.fakeInternet = await startFakeInternet({ netns: names.gatewayNetns, tls: material, log: options.log });
  });
  const outcomes = await Promise.allSettled([wiredAndCapturing, serving]);
  for (const outcome of outcomes) if (outcome.status === 'rejected') throw outcome.reason;
}

function network(parts: Parts, close: () => Promise<void>): TaskNetwork {
  return {
    netnsName: parts.names.machineNetns,
    netnsPath: netnsPath(parts.names.machineNetns),
    guestAddress: parts.addresses.guest,
    gatewayAddress: parts.addresses.gateway,
    route: parts.route,
    close,
  };
}

async function timedTeardown(parts: Parts, log: Logger): Promise<void> {
  const started = performance.now();
  await teardown(parts, { log });
  log.info({ id: parts.names.id, teardownMs: Math.round(performance.now() - started) }, 'task network removed');
}

/** Capture first, so it holds everything up to the end; then the services, the uplink and the namespaces. */
async function teardown(parts: Parts, options: { log: Logger }): Promise<void> {
  const problems: unknown[] = [];
  const attempt = async (step: () => Promise<unknown>) => step().catch((error: unknown) => problems.push(error));
  if (parts.capture) await attempt(() => parts.capture!.stop());
  if (parts.fakeInternet) await attempt(() => parts.fakeInternet!.stop());
  if (parts.created) {
    if (parts.route === 'internet') await attempt(() => disconnectUplink(parts.names, parts.addresses));
    // The helpers above are reaped by now; this verifies that nothing else runs in the namespaces (and
    // kills what does), so no process of the task outlives close().
    for (const netns of [parts.names.gatewayNetns, parts.names.machineNetns]) await attempt(() => drainAndReport(netns, options.log));
    await attempt(() => deleteNamespaces(parts.names));
  }
  parts.addresses.release();
  release(parts.names.id);
  for (const problem of problems) options.log.error({ err: problem, id: parts.names.id }, 'task network teardown step failed');
}

/** Anything found still running is a process that outlived its stop: killed, and worth a warning. */
async function drainAndReport(netns: string, log: Logger): Promise<void> {
  const outlived = await drainNamespace(netns);
  if (outlived.length > 0) log.warn({ netns, pids: outlived }, 'processes outlived the task network and were killed');
}
