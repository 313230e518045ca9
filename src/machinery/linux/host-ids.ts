import { readFile } from 'node:fs/promises';
import { unavailable } from '../../errors.js';

/** How many ids a machine has: 0 to 65535, as on an ordinary Linux system (65534 is nobody). */
export const MACHINE_ID_COUNT = 65536;

/** The host ids that the machine's ids 0 to 65535 are: root inside is `base` outside. */
export interface HostIdRange {
  base: number;
  count: number;
}

export function machineIdRange(base: number): HostIdRange {
  return { base, count: MACHINE_ID_COUNT };
}

/** The host id of an id inside the machine; ids beyond the range become the machine's nobody. */
export function hostIdOf(range: HostIdRange, inside: number): number {
  return range.base + (inside >= 0 && inside < range.count ? inside : 65534);
}

interface Claim {
  file: string;
  owner: string;
  first: number;
  last: number;
}

/**
 * Refuses a range that a host user, group or subordinate id range also uses: a file that one of them owns
 * would be the machine's to change, and the machine's files theirs.
 */
export async function checkRangeIsFree(range: HostIdRange, etc = '/etc'): Promise<void> {
  const claims = [
    ...(await accounts(`${etc}/passwd`)),
    ...(await accounts(`${etc}/group`)),
    ...(await subordinateRanges(`${etc}/subuid`)),
    ...(await subordinateRanges(`${etc}/subgid`)),
  ];
  const last = range.base + range.count - 1;
  const clash = claims.find((claim) => claim.first <= last && claim.last >= range.base);
  if (clash) {
    throw unavailable(
      `the machine ids ${range.base}-${last} (host_id_base) overlap ${clash.owner}'s ids ${clash.first}-${clash.last} in ${clash.file}: choose another host_id_base`,
      { context: { file: clash.file, owner: clash.owner } },
    );
  }
}

async function lines(file: string): Promise<string[][]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.split('\n').filter((line) => line && !line.startsWith('#')).map((line) => line.split(':'));
}

/** passwd and group: name, password, id, ... */
async function accounts(file: string): Promise<Claim[]> {
  return (await lines(file)).flatMap(([name = '', , id]) => {
    const value = Number(id);
    return Number.isInteger(value) ? [{ file, owner: name, first: value, last: value }] : [];
  });
}

/** subuid and subgid: name, first, count. */
async function subordinateRanges(file: string): Promise<Claim[]> {
  return (await lines(file)).flatMap(([name = '', first, count]) => {
    const start = Number(first);
    const size = Number(count);
    return Number.isInteger(start) && Number.isInteger(size) && size > 0 ? [{ file, owner: name, first: start, last: start + size - 1 }] : [];
  });
}
