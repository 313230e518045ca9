import { spawn } from 'node:child_process';
import { inflateRawSync } from 'node:zlib';
import { internal } from '../../errors.js';

/**
 * Decompression of what Debian kernels ship compressed (the kernel payload, modules on newer releases),
 * recognised by magic number. Node has gzip built in; xz and zstd go through their command-line tools.
 */
const FORMATS = [
  { name: 'gzip', magic: Buffer.from([0x1f, 0x8b]), tool: null },
  { name: 'xz', magic: Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]), tool: ['xz', '--decompress', '--stdout', '--single-stream'] },
  { name: 'zstd', magic: Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), tool: ['zstd', '--decompress', '--stdout', '--quiet'] },
] as const;

export function compressionOf(data: Buffer): string | null {
  return FORMATS.find((format) => data.subarray(0, format.magic.length).equals(format.magic))?.name ?? null;
}

/** Decompresses `data`; trailing bytes after the compressed stream (the kernel appends its size) are ignored. */
export async function decompress(data: Buffer, what: string): Promise<Buffer> {
  const format = FORMATS.find((candidate) => data.subarray(0, candidate.magic.length).equals(candidate.magic));
  if (!format) throw internal(`${what}: unknown compression (magic ${data.subarray(0, 6).toString('hex')})`, { context: { what } });
  if (!format.tool) return inflateRawSync(data.subarray(gzipHeaderLength(data))); // stops at the stream's end
  return pipeThrough([...format.tool], data, what);
}

/** RFC 1952: 10 bytes, then the optional extra field, file name, comment and header checksum. */
function gzipHeaderLength(data: Buffer): number {
  const flags = data[3]!;
  let at = 10;
  if (flags & 4) at += 2 + data.readUInt16LE(at);
  if (flags & 8) at = data.indexOf(0, at) + 1;
  if (flags & 16) at = data.indexOf(0, at) + 1;
  if (flags & 2) at += 2;
  return at;
}

function pipeThrough(argv: string[], input: Buffer, what: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['pipe', 'pipe', 'pipe'] });
    const output: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', (error) => reject(internal(`${what}: cannot run ${argv[0]}: ${error.message}`, { cause: error })));
    child.on('close', (code) => {
      if (code === 0) resolve(Buffer.concat(output));
      else reject(internal(`${what}: ${argv[0]} failed (exit ${code}): ${stderr.trim()}`, { context: { argv } }));
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}
