/** An IPv4 address in dotted form as a 32-bit number, and back. */
export function ipToNumber(ip: string): number {
  return ip.split('.').reduce((total, octet) => total * 256 + Number(octet), 0);
}

export function numberToIp(value: number): string {
  return [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join('.');
}
