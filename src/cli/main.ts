#!/usr/bin/env node
import { Command } from 'commander';
import { NestboxError } from '../errors.js';
import { NESTBOX_RELEASE } from '../version.js';
import { listCommand, statusCommand, submitCommand } from './commands.js';
import { imageBuildCommand } from './images.js';
import { startCommand } from './start.js';

const program = new Command()
  .name('nestbox')
  .description('Automated malware-analysis sandbox with a Cuckoo 2.0-compatible REST API')
  .version(NESTBOX_RELEASE)
  .option('--home <dir>', 'installation folder: config.yaml, database, storage (env NESTBOX_HOME, default ~/.nestbox)')
  .option('--url <url>', 'API address for client commands (default: from the configuration)')
  .option('--token <token>', 'API token for client commands (default: from the configuration)');

program
  .command('start')
  .description('start the REST API service and the analysis engine')
  .option('-H, --host <host>', 'address to bind (env NESTBOX_API_HOST)')
  .option('-p, --port <port>', 'port to bind (env NESTBOX_API_PORT)')
  .option('-d, --debug', 'debug mode: enables GET /exit')
  .option('--no-engine', 'serve the API only; run no analyses on this node')
  .option('--role <role>', 'role in a cluster: all (one host), main (API and storage) or worker (runs machines) (env NESTBOX_CLUSTER_ROLE)')
  .action((options) => startCommand({ ...program.opts(), ...options }));

program
  .command('status')
  .description("show the cluster's status: tasks, machines, and each node with its heartbeat, machines and running tasks")
  .option('--json', 'print /cuckoo/status as JSON (load, memory, disk space too)')
  .action((options) => statusCommand({ ...program.opts(), ...options }));

program
  .command('submit <target>')
  .description('submit a file or an http(s) URL for analysis')
  .option('--package <name>', 'analysis package (default: chosen from the file type)')
  .option('--timeout <seconds>', 'analysis timeout')
  .option('--priority <n>', 'priority, 1 (low) to 3 (high)')
  .option('--options <k=v,...>', 'options for the analysis package, e.g. arguments=-x,route=none')
  .option('--machine <name>', 'machine to use')
  .option('--platform <name>', 'platform to pick the machine from')
  .option('--tags <a,b>', 'machine tags')
  .option('--memory', 'dump memory')
  .option('--enforce-timeout', 'run for the whole timeout')
  .option('-w, --wait', 'wait until the task ends and print its result')
  .action((target, options) => submitCommand(target, { ...program.opts(), ...options }));

program
  .command('list')
  .description('list tasks')
  .option('-n, --limit <n>', 'at most this many')
  .option('--status <status>', 'only tasks in this state')
  .action((options) => listCommand({ ...program.opts(), ...options }));

program
  .command('image')
  .description('guest images of the qemu machines')
  .command('build')
  .description("build the qemu machines' guest image and ready state now (otherwise on first use)")
  .option('--machine <name>', 'only this qemu machine of the configuration')
  .option('--prune', 'remove the other versions of the images built (older recipes, interrupted builds)')
  .action((options) => imageBuildCommand({ ...program.opts(), ...options }));

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (!(error instanceof NestboxError)) throw error;
  process.stderr.write(`nestbox: ${error.message}\n`);
  process.exitCode = 1;
}
