import { invalidInput } from '../../../errors.js';

/**
 * Names of everything a task network creates. Everything carries nestbox's prefix, so that what a crash
 * leaves behind can be found again (cleanup.ts), and the task id, so that one task's leftovers can be
 * told from another's.
 */
export const NETNS_PREFIX = 'nestbox-net-';
/** Host-side interface of an internet uplink: `nbx-<id>` fits the 15 characters Linux allows. */
export const HOST_LINK_PREFIX = 'nbx-';
/** Host nftables table of an internet uplink, in the inet family. */
export const HOST_TABLE_PREFIX = 'nestbox_';

/** Interfaces inside the task's namespaces; they live only there, so the names can be the same for every task. */
export const GUEST_INTERFACE = 'eth0';
export const GATEWAY_INTERFACE = 'gw0';
export const UPLINK_INTERFACE = 'up0';
/** The gateway namespace's own nftables table. */
export const GATEWAY_TABLE = 'nestbox';

const ID_PATTERN = /^[A-Za-z0-9_]{1,8}$/;

export interface TaskNames {
  id: string;
  machineNetns: string;
  gatewayNetns: string;
  hostLink: string;
  hostTable: string;
}

export function taskNames(id: string): TaskNames {
  if (!ID_PATTERN.test(id)) {
    throw invalidInput(`task network id must be 1 to 8 letters, digits or _ (got ${JSON.stringify(id)})`, {
      context: { id },
    });
  }
  return {
    id,
    machineNetns: `${NETNS_PREFIX}${id}`,
    gatewayNetns: `${NETNS_PREFIX}${id}-gw`,
    hostLink: `${HOST_LINK_PREFIX}${id}`,
    hostTable: `${HOST_TABLE_PREFIX}${id}`,
  };
}

/** The task id a nestbox-made name belongs to, or null when the name is not ours. */
export function idFromName(name: string): string | null {
  for (const prefix of [NETNS_PREFIX, HOST_LINK_PREFIX, HOST_TABLE_PREFIX]) {
    if (!name.startsWith(prefix)) continue;
    const id = name.slice(prefix.length).replace(/-gw$/, '');
    return ID_PATTERN.test(id) ? id : null;
  }
  return null;
}

export function netnsPath(name: string): string {
  return `/run/netns/${name}`;
}
