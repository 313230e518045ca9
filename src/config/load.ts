import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { NestboxError } from '../errors.js';
import { type Config, configSchema } from './schema.js';
import { configTemplate } from './template.js';

export const CONFIG_FILE_NAME = 'config.yaml';

export interface LoadedConfig {
  config: Config;
  /** The installation's home folder: config, database, storage. */
  home: string;
  file: string;
  /** Set when this call created the file; the caller shows it once. */
  createdToken?: string;
}

export function defaultHome(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.NESTBOX_HOME || join(homedir(), '.nestbox'));
}

/** A token like Cuckoo's: 16 random bytes, URL-safe base64 without padding. */
export function generateToken(): string {
  return randomBytes(16).toString('base64url');
}

/** Reads `<home>/config.yaml`, creating it with a fresh token on first start, then applies `NESTBOX_*` overrides. */
export function loadConfig(home: string, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  mkdirSync(home, { recursive: true });
  const file = join(home, CONFIG_FILE_NAME);
  let createdToken: string | undefined;
  if (!existsSync(file)) {
    createdToken = generateToken();
    writeFileSync(file, configTemplate(createdToken), { mode: 0o600 });
  }
  const raw = parseConfigFile(file);
  const config = validateConfig(applyEnvOverrides(raw, env), file);
  config.paths.storage = resolveUnder(home, config.paths.storage);
  config.paths.tmppath = resolveUnder(home, config.paths.tmppath);
  return { config, home, file, createdToken };
}

function parseConfigFile(file: string): Record<string, unknown> {
  try {
    const parsed: unknown = parseYaml(readFileSync(file, 'utf8'));
    if (parsed === null || parsed === undefined) return {};
    if (typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('the top level must be a mapping');
    return parsed as Record<string, unknown>;
  } catch (error) {
    throw new NestboxError('invalid_config', `cannot read ${file}: ${(error as Error).message}`, { cause: error });
  }
}

export function validateConfig(raw: unknown, source = 'configuration'): Config {
  const result = configSchema.safeParse(raw);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => `${describeIssuePath(raw, issue.path)}: ${issue.message}`);
  throw new NestboxError('invalid_config', `invalid ${source}: ${problems.join('; ')}`);
}

/** The key's dotted path; under `machines`, also the machine's name (an operator knows machines by name). */
function describeIssuePath(raw: unknown, path: PropertyKey[]): string {
  const dotted = path.map(String).join('.') || '(root)';
  const name = path[0] === 'machines' && typeof path[1] === 'number' ? machineName(raw, path[1]) : undefined;
  return name === undefined ? dotted : `${dotted} (machine ${name})`;
}

function machineName(raw: unknown, index: number): string | undefined {
  const machines = (raw as { machines?: unknown } | null)?.machines;
  const name = Array.isArray(machines) ? (machines[index] as { name?: unknown } | null)?.name : undefined;
  return typeof name === 'string' ? name : undefined;
}

function resolveUnder(home: string, path: string): string {
  return isAbsolute(path) ? path : resolve(home, path);
}

/**
 * Every leaf of the configuration can be overridden by `NESTBOX_<SECTION>_<KEY>`, for example
 * `NESTBOX_API_PORT=9000`. Lists and objects take JSON (`NESTBOX_MACHINES='[{"name":"a"}]'`).
 */
export function applyEnvOverrides(raw: Record<string, unknown>, env: NodeJS.ProcessEnv): Record<string, unknown> {
  const defaults = configSchema.parse({}) as Record<string, unknown>;
  const result = structuredClone(raw);
  for (const [path, example] of leafPaths(defaults)) {
    const name = `NESTBOX_${path.join('_').toUpperCase()}`;
    const value = env[name];
    if (value === undefined) continue;
    setPath(result, path, parseEnvValue(name, value, example));
  }
  return result;
}

function* leafPaths(object: Record<string, unknown>, prefix: string[] = []): Generator<[string[], unknown]> {
  for (const [key, value] of Object.entries(object)) {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      yield* leafPaths(value as Record<string, unknown>, [...prefix, key]);
    } else {
      yield [[...prefix, key], value];
    }
  }
}

function parseEnvValue(name: string, value: string, example: unknown): unknown {
  if (typeof example === 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    if (typeof example === 'boolean') return z.stringbool().safeParse(value).data ?? value;
    throw new NestboxError('invalid_config', `${name} must be JSON (got ${JSON.stringify(value)})`);
  }
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1]!] = value;
}
