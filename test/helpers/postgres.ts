import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestPostgres {
  /** Connection string for nestbox's `database.connection`. */
  url: string;
  stop(): void;
}

/**
 * A throwaway PostgreSQL cluster of our own: initdb into a temp folder, served only on a unix socket
 * in that folder (no TCP at all), run as the `postgres` user because PostgreSQL refuses root.
 */
export function startTestPostgres(): TestPostgres {
  const bin = postgresBin();
  const dir = mkdtempSync(join(tmpdir(), 'nestbox-pg-'));
  chmodSync(dir, 0o777);
  const data = join(dir, 'data');
  const asPostgres = (args: string[]) => execFileSync('runuser', ['-u', 'postgres', '--', ...args], { stdio: 'pipe' });
  asPostgres([join(bin, 'initdb'), '-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  asPostgres([
    join(bin, 'pg_ctl'), '-D', data, '-l', join(dir, 'log'), '-w', 'start',
    '-o', `-k ${dir} -c listen_addresses= -c fsync=off -c max_connections=50`,
  ]);
  asPostgres([join(bin, 'createdb'), '-h', dir, 'nestbox']);
  return {
    url: `postgres://postgres@localhost/nestbox?host=${encodeURIComponent(dir)}`,
    stop() {
      spawnSync('runuser', ['-u', 'postgres', '--', join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', 'stop'], { stdio: 'ignore' });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function postgresBin(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  const found = versions.map((v) => join(root, v, 'bin')).find((dir) => existsSync(join(dir, 'initdb')));
  if (!found) throw new Error('PostgreSQL server binaries not found: run scripts/setup.sh --test (installs postgresql)');
  return found;
}
