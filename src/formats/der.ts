/**
 * Just enough DER to take the certificates out of a PKCS#7 SignedData blob (an Authenticode signature):
 * ContentInfo { OID, [0] SignedData { version, digestAlgorithms, contentInfo, [0] certificates... } }.
 * Node's X509Certificate parses each certificate; this walker only finds them.
 */

interface Node {
  tag: number;
  /** The whole element, header included. */
  raw: Buffer;
  content: Buffer;
}

function readNode(data: Buffer, offset: number): Node | undefined {
  if (offset + 2 > data.length) return undefined;
  const tag = data[offset]!;
  let length = data[offset + 1]!;
  let header = 2;
  if (length & 0x80) {
    const bytes = length & 0x7f;
    // Indefinite lengths (BER) and lengths beyond 4 bytes do not occur in DER signatures.
    if (bytes === 0 || bytes > 4 || offset + 2 + bytes > data.length) return undefined;
    length = 0;
    for (let i = 0; i < bytes; i++) length = length * 256 + data[offset + 2 + i]!;
    header += bytes;
  }
  const end = offset + header + length;
  if (end > data.length) return undefined;
  return { tag, raw: data.subarray(offset, end), content: data.subarray(offset + header, end) };
}

function children(node: Node): Node[] {
  const nodes: Node[] = [];
  for (let offset = 0; offset < node.content.length; ) {
    const child = readNode(node.content, offset);
    if (!child) break;
    nodes.push(child);
    offset += child.raw.length;
  }
  return nodes;
}

const SEQUENCE = 0x30;
const CONTEXT_0 = 0xa0;

/** DER certificates inside a PKCS#7 SignedData ContentInfo; [] when the blob is not one. */
export function certificatesOfPkcs7(data: Buffer): Buffer[] {
  const contentInfo = readNode(data, 0);
  if (contentInfo?.tag !== SEQUENCE) return [];
  const explicit = children(contentInfo).find((node) => node.tag === CONTEXT_0);
  const signedData = explicit ? children(explicit)[0] : undefined;
  if (signedData?.tag !== SEQUENCE) return [];
  const certificates = children(signedData).find((node) => node.tag === CONTEXT_0);
  return certificates ? children(certificates).filter((node) => node.tag === SEQUENCE).map((node) => node.raw) : [];
}
