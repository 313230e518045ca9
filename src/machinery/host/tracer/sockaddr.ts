import { familyName, type SocketAddress } from './trace-records.js';

const AF_UNIX = 1;
const AF_INET = 2;
const AF_INET6 = 10;
const AF_NETLINK = 16;

/**
 * Decodes the start of a `struct sockaddr` as the kernel lays it out (family in host order, port and
 * address in network order). `unixPath` is the path of a unix socket address when the tracer read it
 * as a string; abstract unix names (leading NUL) are shown with a leading '@'.
 */
export function decodeSockaddr(bytes: Buffer, unixPath = ''): SocketAddress | null {
  if (bytes.length < 2) return null;
  const family = bytes.readUInt16LE(0);
  switch (family) {
    case AF_INET:
      return { family: 'inet', address: [...bytes.subarray(4, 8)].join('.'), port: bytes.readUInt16BE(2) };
    case AF_INET6:
      return { family: 'inet6', address: formatIpv6(bytes.subarray(8, 24)), port: bytes.readUInt16BE(2) };
    case AF_UNIX:
      return { family: 'unix', address: unixAddress(bytes, unixPath), port: 0 };
    case AF_NETLINK:
      return { family: 'netlink', address: String(bytes.length >= 8 ? bytes.readUInt32LE(4) : 0), port: 0 };
    default:
      return { family: familyName(family), address: '', port: 0 };
  }
}

function unixAddress(bytes: Buffer, unixPath: string): string {
  if (unixPath !== '') return unixPath;
  if (bytes.length > 3 && bytes[2] === 0) {
    const name = bytes.subarray(3);
    const end = name.indexOf(0);
    return `@${name.subarray(0, end < 0 ? name.length : end).toString('utf8')}`;
  }
  return '';
}

/** RFC 5952 text form: lower-case hex, the longest run of zero groups as '::', IPv4-mapped as dotted quad. */
export function formatIpv6(bytes: Buffer): string {
  if (bytes.length < 16) return '';
  const groups = Array.from({ length: 8 }, (_, i) => bytes.readUInt16BE(i * 2));
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `::ffff:${[...bytes.subarray(12, 16)].join('.')}`;
  }
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}
