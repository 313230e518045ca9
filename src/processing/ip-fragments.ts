/**
 * IPv4 datagrams put back together from their fragments (RFC 791), so that a DNS answer or a TCP segment
 * larger than the link's MTU is read as the one datagram it was sent as. Memory stays bounded: at most
 * MAX_PENDING datagrams wait for missing fragments (the oldest is given up first), and none beyond the
 * 65535 bytes an IPv4 datagram can hold.
 */

const MAX_PENDING = 1024;
const MAX_DATAGRAM = 65535;
const MORE_FRAGMENTS = 0x2000;

interface Pending {
  /** The first fragment's header, once it arrived. */
  header: Buffer | undefined;
  parts: Array<{ offset: number; data: Buffer }>;
  /** The payload's length, known from the last fragment. */
  length: number | undefined;
}

export function isFragment(ip: Buffer): boolean {
  return (ip.readUInt16BE(6) & (MORE_FRAGMENTS | 0x1fff)) !== 0;
}

export class Ipv4Reassembler {
  readonly #pending = new Map<string, Pending>();

  /**
   * Takes one fragment (an IPv4 packet whose length field is trusted, header checked by the caller);
   * returns the whole datagram when this fragment completes it, with its header saying so.
   */
  add(ip: Buffer): Buffer | undefined {
    const headerLength = (ip[0]! & 0x0f) * 4;
    const flags = ip.readUInt16BE(6);
    const offset = (flags & 0x1fff) * 8;
    const data = ip.subarray(headerLength);
    if (offset + data.length > MAX_DATAGRAM) return undefined;
    const key = `${ip.toString('hex', 12, 20)}|${ip.readUInt16BE(4)}|${ip[9]}`;
    const pending = this.#pendingFor(key);
    if (offset === 0) pending.header = Buffer.from(ip.subarray(0, headerLength));
    if ((flags & MORE_FRAGMENTS) === 0) pending.length = offset + data.length;
    pending.parts.push({ offset, data: Buffer.from(data) });
    const whole = assembled(pending);
    if (whole) this.#pending.delete(key);
    return whole;
  }

  #pendingFor(key: string): Pending {
    let pending = this.#pending.get(key);
    if (!pending) {
      if (this.#pending.size >= MAX_PENDING) this.#pending.delete(this.#pending.keys().next().value!);
      pending = { header: undefined, parts: [], length: undefined };
      this.#pending.set(key, pending);
    }
    return pending;
  }
}

/** The datagram, when the fragments cover it from its first byte to its last without a gap. */
function assembled(pending: Pending): Buffer | undefined {
  const { header, length } = pending;
  if (!header || length === undefined) return undefined;
  const parts = [...pending.parts].sort((a, b) => a.offset - b.offset);
  let covered = 0;
  for (const part of parts) {
    if (part.offset > covered) return undefined;
    covered = Math.max(covered, part.offset + part.data.length);
  }
  if (covered < length) return undefined;
  const datagram = Buffer.alloc(header.length + length);
  header.copy(datagram);
  // Where fragments overlap, the bytes of the one that came later are kept.
  for (const part of pending.parts) part.data.copy(datagram, header.length + part.offset, 0, Math.max(0, Math.min(part.data.length, length - part.offset)));
  datagram.writeUInt16BE(datagram.length, 2);
  datagram.writeUInt16BE(0, 6);
  return datagram;
}
