import { defaultMachineName as qualifiedDefaultName } from '../config/auto-machines.js';
import type { Config } from '../config/schema.js';
import { configuredNodeName } from '../db/node-scope.js';

/** This node's name in the cluster: cluster.node_name, or the host's name when that is empty. */
export function nodeName(config: Pick<Config, 'cluster'>): string {
  return configuredNodeName(config.cluster);
}

/**
 * The name of the n-th default linux machine (n from 1): `linux<n>`, or `<node>-linux<n>` when
 * cluster.node_name is set, because machine names are unique across a cluster whose nodes share one
 * database (and perhaps one host).
 */
export function defaultMachineName(configuredNodeName: string, n: number): string {
  return qualifiedDefaultName(n, configuredNodeName);
}
