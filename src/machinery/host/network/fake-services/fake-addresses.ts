import { createHash } from 'node:crypto';

/**
 * Every name the sample resolves gets its own stable address in 198.18.0.0/15 (RFC 2544, reserved for
 * benchmarking, so never a real host's address). Distinct addresses per name let network analysis tie
 * each connection in the capture back to the name the sample looked up; the gateway's catch-all DNAT
 * sends all of them to the fake services anyway.
 */
export const FAKE_ADDRESS_BLOCK = { base: '198.18.0.0', prefix: 15 } as const;

const BLOCK_START = (198 << 24) | (18 << 16);
const BLOCK_SIZE = 2 ** (32 - FAKE_ADDRESS_BLOCK.prefix);

export function fakeAddressFor(name: string): string {
  const digest = createHash('sha256').update(name.toLowerCase().replace(/\.$/, '')).digest();
  // Skip the block's network and broadcast-looking ends (.0 and .255) so every answer looks like a host.
  const offset = 1 + (digest.readUInt32BE(0) % (BLOCK_SIZE - 2));
  const address = (BLOCK_START + offset) >>> 0;
  const octets = [address >>> 24, (address >>> 16) & 255, (address >>> 8) & 255, address & 255];
  if (octets[3] === 0 || octets[3] === 255) octets[3] = 1;
  return octets.join('.');
}

export function isFakeAddress(address: string): boolean {
  const [a, b] = address.split('.').map(Number);
  return a === 198 && (b === 18 || b === 19);
}
