import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Uint8ArrayReader, Uint8ArrayWriter, ZipReader } from '@zip.js/zip.js';

/**
 * A TEST DOUBLE of an outside system that cannot run here: a Windows 7/10 guest running Cuckoo 2.0.7's
 * agent (agent.pyw, agent version 0.10, under Python 2.7). No Windows image exists on this host, so the
 * double answers Cuckoo's agent protocol over HTTP on loopback as such a guest answers it, at the
 * protocol level only, written from how Cuckoo 2.0.7's agent behaves (not from its code):
 *   - multipart form fields in, JSON out; 400 for a missing field, 404 for an unknown route, 500 with a
 *     Python traceback when the operation fails (storing into a folder that does not exist...);
 *   - a Windows environment (SYSTEMDRIVE, TEMP with a drive letter and backslashes), `system` Windows;
 *   - Windows paths: drive letters, `\` or `/` as separators, case-insensitive names; a path without a
 *     drive (`/tmp/x`) lands on the current drive, where `\tmp` does not exist;
 *   - /mkdtemp joins as Python 2's ntpath does: `C:\` + `tmpab12cd`, or `C:/tmpab12cd` when given `C:/`;
 *   - /extract unpacks the zip into a folder, /execute answers `getmac` and `netsh` as Windows does;
 *   - /execpy starts the Python file with the agent's interpreter: here the test's stand-in for what runs
 *     next (Cuckoo's analyzer) is called, if the file exists.
 * Every request is recorded, so tests assert what the host sent.
 */
export interface AgentRequest {
  method: string;
  path: string;
  fields: Record<string, string>;
  files: Record<string, Buffer>;
}

export interface WindowsAgentOptions {
  user?: string;
  /** The guest's network cards: connection name and MAC (getmac's listing). */
  cards?: Array<{ name: string; mac: string }>;
  /** What the analyzer does once execpy started it (the part of Cuckoo's analyzer). */
  onExecpy?(run: { filepath: string; cwd: string; guest: WindowsAgentDouble }): Promise<void> | void;
}

interface Entry {
  /** The path as first written (Windows keeps the case it was created with). */
  path: string;
  data: Buffer | null;
}

export class WindowsAgentDouble {
  readonly requests: AgentRequest[] = [];
  readonly environ: Record<string, string>;
  private readonly disk = new Map<string, Entry>();
  private state: { status: string | null; description: string | null } = { status: null, description: null };
  private pinned: string | null = null;
  private readonly running: Promise<void>[] = [];
  private server!: http.Server;

  constructor(private readonly options: WindowsAgentOptions = {}) {
    const user = options.user ?? 'abecker';
    const home = `C:\\Users\\${user}`;
    this.environ = {
      SYSTEMDRIVE: 'C:',
      SYSTEMROOT: 'C:\\Windows',
      WINDIR: 'C:\\Windows',
      TEMP: `${home}\\AppData\\Local\\Temp`,
      TMP: `${home}\\AppData\\Local\\Temp`,
      USERPROFILE: home,
      USERNAME: user,
      COMPUTERNAME: 'DESKTOP-7KQ2M4R',
      PATH: 'C:\\Python27\\;C:\\Windows\\system32;C:\\Windows',
      PROCESSOR_ARCHITECTURE: 'x86',
      OS: 'Windows_NT',
    };
    for (const dir of ['C:\\', 'C:\\Windows', 'C:\\Windows\\Temp', 'C:\\Python27', 'C:\\Users', home, `${home}\\AppData`, `${home}\\AppData\\Local`, this.environ.TEMP!]) {
      this.disk.set(key(dir), { path: dir, data: null });
    }
  }

  async start(): Promise<string> {
    this.server = http.createServer((request, response) => void this.answer(request, response));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Stops answering, after what execpy started has finished. */
  async stop(): Promise<void> {
    await Promise.allSettled(this.running);
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /** A file of the guest's disk (any separator and case), or undefined. */
  file(path: string): Buffer | undefined {
    return this.disk.get(key(resolve(path) ?? ''))?.data ?? undefined;
  }

  /** Every file under a folder, with the path it was written under. */
  filesUnder(dir: string): Map<string, Buffer> {
    const prefix = `${key(resolve(dir) ?? '')}\\`;
    const found = new Map<string, Buffer>();
    for (const [name, entry] of this.disk) if (name.startsWith(prefix) && entry.data) found.set(entry.path, entry.data);
    return found;
  }

  /** Requests but the status polls, as `METHOD /path`. */
  get steps(): string[] {
    return this.requests.filter((request) => request.path !== '/status').map((request) => `${request.method} ${request.path}`);
  }

  /** The status the analyzer reports (Cuckoo's analyzer posts it to the agent on 127.0.0.1:8000). */
  report(status: string, description: string | null): void {
    this.state = { status, description };
  }

  private async answer(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const path = (request.url ?? '/').split('?')[0]!;
    const form = await formOf(request);
    this.requests.push({ method: request.method ?? 'GET', path, ...form });
    // A pinned agent stays silent to every other address: the connection just closes.
    if (this.pinned && request.socket.remoteAddress !== this.pinned) return void request.socket.destroy();
    const [status, body] = await this.route(request.method ?? 'GET', path, form, request.socket.remoteAddress ?? '');
    response.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
  }

  private async route(method: string, path: string, { fields, files }: Omit<AgentRequest, 'method' | 'path'>, client: string): Promise<[number, object]> {
    const ok = (message: string, values: object = {}): [number, object] => [200, { message, ...values }];
    const key = `${method} ${path}`;
    if (key === 'GET /') return ok('Cuckoo Agent!', { version: '0.10', features: ['execpy', 'pinning', 'logs', 'largefile', 'unicodepath'] });
    if (key === 'GET /status') return ok('Analysis status', this.state);
    if (key === 'POST /status') {
      if (!fields.status) return missing('No status has been provided');
      this.report(fields.status, fields.description ?? null);
      return ok('Analysis status updated');
    }
    if (key === 'GET /environ') return ok('Environment variables', { environ: this.environ });
    if (key === 'GET /system') return ok('System', { system: 'Windows' });
    if (key === 'GET /pinning') {
      this.pinned = client;
      return ok('Successfully pinned Agent', { client_ip: client });
    }
    if (key === 'POST /mkdir') return fields.dirpath === undefined ? missing('No dirpath has been provided') : this.mkdir(fields.dirpath);
    if (path === '/mkdtemp') return this.mkdtemp(fields.prefix ?? 'tmp', fields.dirpath ?? this.environ.TEMP!);
    if (key === 'POST /store') {
      if (fields.filepath === undefined) return missing('No filepath has been provided');
      if (!files.file) return missing('No file has been provided');
      return this.write(fields.filepath, files.file) ? ok('Successfully stored file') : pythonError('Error storing file', 'IOError', fields.filepath);
    }
    if (key === 'POST /extract') {
      if (fields.dirpath === undefined) return missing('No dirpath has been provided');
      if (!files.zipfile) return missing('No zip file has been provided');
      return this.extract(fields.dirpath, files.zipfile);
    }
    if (key === 'POST /execute') return fields.command === undefined ? missing('No command has been provided') : ok('Successfully executed command', this.execute(fields.command));
    if (key === 'POST /execpy') return fields.filepath === undefined ? missing('No Python file has been provided') : this.execpy(fields.filepath, fields.cwd ?? '');
    return [404, { message: 'Route not found', error_code: 404 }];
  }

  private mkdir(path: string): [number, object] {
    const resolved = resolve(path);
    if (!resolved || this.disk.has(key(resolved))) return pythonError('Error creating directory', 'WindowsError', path);
    this.makeFolders(resolved);
    return [200, { message: 'Successfully created directory' }];
  }

  private mkdtemp(prefix: string, dirpath: string): [number, object] {
    const resolved = resolve(dirpath);
    if (!resolved || this.disk.get(key(resolved))?.data !== null) return pythonError('Error creating temporary directory', 'OSError', dirpath);
    const name = `${prefix}${[...randomBytes(6)].map((byte) => 'abcdefghijklmnopqrstuvwxyz0123456789_'[byte % 37]).join('')}`;
    // Python 2's ntpath.join adds a backslash unless the folder already ends with a separator.
    const made = /[\\/]$/.test(dirpath) ? `${dirpath}${name}` : `${dirpath}\\${name}`;
    this.disk.set(key(resolve(made)!), { path: made, data: null });
    return [200, { message: 'Successfully created temporary directory', dirpath: made }];
  }

  private async extract(dirpath: string, zip: Buffer): Promise<[number, object]> {
    const dir = resolve(dirpath);
    let entries;
    try {
      entries = await new ZipReader(new Uint8ArrayReader(zip)).getEntries();
    } catch {
      return pythonError('Error extracting zip file', 'BadZipfile', 'File is not a zip file');
    }
    if (!dir) return pythonError('Error extracting zip file', 'WindowsError', dirpath);
    this.makeFolders(dir);
    for (const entry of entries) {
      if (entry.directory) continue;
      const path = `${dir}\\${entry.filename.replaceAll('/', '\\')}`;
      this.makeFolders(path.slice(0, path.lastIndexOf('\\')));
      this.disk.set(key(path), { path, data: Buffer.from(await entry.getData!(new Uint8ArrayWriter())) });
    }
    return [200, { message: 'Successfully extracted zip file' }];
  }

  private execute(command: string): { stdout: string; stderr: string } {
    if (/^getmac\b/i.test(command)) {
      const cards = this.options.cards ?? [];
      const lines = cards.map((card) => `"${card.name}","Intel(R) PRO/1000 MT Network Connection","${card.mac.replaceAll(':', '-').toUpperCase()}","\\Device\\Tcpip_{${randomBytes(4).toString('hex').toUpperCase()}}"`);
      return { stdout: `${lines.join('\r\n')}\r\n`, stderr: '' };
    }
    if (/^netsh\b/i.test(command)) {
      const name = /name="([^"]*)"/.exec(command)?.[1];
      const known = (this.options.cards ?? []).some((card) => card.name.toLowerCase() === name?.toLowerCase());
      return known ? { stdout: '', stderr: '' } : { stdout: 'The filename, directory name, or volume label syntax is incorrect.\r\n\r\n', stderr: '' };
    }
    return { stdout: '', stderr: '' };
  }

  private execpy(filepath: string, cwd: string): [number, object] {
    // Popen of python.exe succeeds whatever the file: a missing analyzer.py just never reports.
    if (this.file(filepath) && this.options.onExecpy) this.running.push(Promise.resolve(this.options.onExecpy({ filepath, cwd, guest: this })));
    return [200, { message: 'Successfully executed command', stdout: null, stderr: null }];
  }

  private write(path: string, data: Buffer): boolean {
    const resolved = resolve(path);
    if (!resolved) return false;
    const parent = this.disk.get(key(resolved.slice(0, resolved.lastIndexOf('\\')) || resolved.slice(0, 3)));
    if (!parent || parent.data !== null) return false;
    this.disk.set(key(resolved), { path, data });
    return true;
  }

  private makeFolders(path: string): void {
    const parts = path.split('\\');
    for (let i = 1; i <= parts.length; i++) {
      const folder = i === 1 ? `${parts[0]}\\` : parts.slice(0, i).join('\\');
      if (!this.disk.has(key(folder))) this.disk.set(key(folder), { path: folder, data: null });
    }
  }
}

/** A Windows path made absolute (the agent's current drive is C:), with backslashes; null if it cannot be one. */
function resolve(path: string): string | null {
  let value = path.replaceAll('/', '\\').replace(/\\{2,}/g, '\\');
  if (value.startsWith('\\')) value = `C:${value}`;
  if (!/^[A-Za-z]:\\/.test(value) && !/^[A-Za-z]:$/.test(value)) return null;
  if (/^[A-Za-z]:$/.test(value)) value = `${value}\\`;
  return value.length > 3 ? value.replace(/\\$/, '') : value;
}

function key(path: string): string {
  return path.toLowerCase();
}

function missing(message: string): [number, object] {
  return [400, { message, error_code: 400 }];
}

function pythonError(message: string, kind: string, detail: string): [number, object] {
  const traceback = `Traceback (most recent call last):\n  File "C:\\agent.pyw", line 1, in <module>\n${kind}: [Errno 2] No such file or directory: '${detail}'\n`;
  return [500, { message, error_code: 500, traceback }];
}

async function formOf(request: http.IncomingMessage): Promise<Omit<AgentRequest, 'method' | 'path'>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const fields: Record<string, string> = {};
  const files: Record<string, Buffer> = {};
  if (request.method !== 'POST' || chunks.length === 0) return { fields, files };
  const body = new Request('http://agent/', { method: 'POST', headers: { 'content-type': request.headers['content-type'] ?? '' }, body: Buffer.concat(chunks) });
  for (const [name, value] of await body.formData()) {
    if (typeof value === 'string') fields[name] = value;
    else files[name] = Buffer.from(await value.arrayBuffer());
  }
  return { fields, files };
}
