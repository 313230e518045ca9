import { readOperState } from './uplink.js';

/**
 * The state of the host interfaces routes depend on (the internet interface, VPN tunnels), for
 * `/vpn/status` and for refusing a route whose interface is down.
 */
export interface InterfaceState {
  name: string;
  exists: boolean;
  /** The kernel's operstate: up, down, unknown (typical of tun devices that work), dormant... */
  state: string | null;
  /** Usable for routing: present and not down. */
  usable: boolean;
}

export function interfaceStates(names: readonly string[]): InterfaceState[] {
  return names.map((name) => {
    const state = /^[A-Za-z0-9_.:-]{1,15}$/.test(name) && name !== '.' && name !== '..' ? readOperState(name) : null;
    return { name, exists: state !== null, state, usable: state !== null && state !== 'down' && state !== 'lowerlayerdown' };
  });
}
