/**
 * Which port of the gateway answers what. The gateway's nftables rules send every TCP connection of the
 * machine either to the same port here (a known service) or to the catch-all, so both the rule set and
 * the fake-services process read this one table.
 */
export type ServiceName = 'dns' | 'http' | 'https' | 'smtp' | 'smtps' | 'irc' | 'ircs' | 'ftp' | 'catch-all';

export const SERVICE_PORTS: Readonly<Record<Exclude<ServiceName, 'catch-all' | 'dns'>, readonly number[]>> = {
  ftp: [21],
  smtp: [25, 587, 2525],
  http: [80, 8000, 8080],
  https: [443, 8443],
  smtps: [465],
  irc: [6660, 6661, 6662, 6663, 6664, 6665, 6666, 6667, 6668, 6669, 7000],
  ircs: [6697],
};

export const DNS_PORT = 53;

/** Every TCP port not listed above lands here; the service guesses the protocol from the first bytes. */
export const CATCH_ALL_PORT = 65000;

/** TCP ports the gateway keeps as they are (a service listens on each). */
export function keptTcpPorts(): number[] {
  return [DNS_PORT, ...Object.values(SERVICE_PORTS).flat()].sort((a, b) => a - b);
}
