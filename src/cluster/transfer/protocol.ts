import type { Config } from '../../config/schema.js';

/**
 * How a worker and the main node exchange samples and results over HTTP(S): the paths, the headers and
 * the credential. Shared by the main node's routes (api/routes/cluster-transfer.ts) and the worker's
 * client (cluster/transfer/client.ts), so the two cannot drift apart.
 */

export const CLUSTER_PREFIX = '/cluster/v1';

export const samplePath = (taskId: number) => `${CLUSTER_PREFIX}/tasks/${taskId}/sample`;
export const resultsPath = (taskId: number) => `${CLUSTER_PREFIX}/tasks/${taskId}/results`;

/** The sample's sha256 (GET sample), or the whole results archive's (PUT results): the receiver checks it. */
export const SHA256_HEADER = 'x-nestbox-sha256';
/** The results archive's length in bytes: the main node refuses an archive over its limit before reading it. */
export const LENGTH_HEADER = 'x-nestbox-length';
export const RESULTS_TYPE = 'application/x-tar';
/** The uploading node's name: results are taken only from the node that holds the task (tasks.node). */
export const NODE_HEADER = 'x-nestbox-node';

/** What nodes present to each other as `Authorization: Bearer`: cluster.node_token, else api.token. */
export function nodeCredential(config: Config): string {
  return config.cluster.node_token || config.api.token;
}
