#!/usr/bin/env node
import { Command } from 'commander';
import { NESTBOX_RELEASE } from '../version.js';
import { startCommand } from './start.js';

const program = new Command()
  .name('nestbox')
  .description('Automated malware-analysis sandbox with a Cuckoo 2.0-compatible REST API')
  .version(NESTBOX_RELEASE)
  .option('--home <dir>', 'installation folder: config.yaml, database, storage (env NESTBOX_HOME, default ~/.nestbox)');

program
  .command('start')
  .description('start the REST API service (and the analysis engine)')
  .option('-H, --host <host>', 'address to bind (env NESTBOX_API_HOST)')
  .option('-p, --port <port>', 'port to bind (env NESTBOX_API_PORT)')
  .option('-d, --debug', 'debug mode: enables GET /exit')
  .action((options) => startCommand({ ...program.opts(), ...options }));

await program.parseAsync(process.argv);
