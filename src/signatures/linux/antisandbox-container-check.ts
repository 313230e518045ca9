import type { BehaviorEvent } from '../../report/events.js';
import { basename } from '../helpers/paths.js';
import { filesRead, RuleSignature } from '../rule-signature.js';
import type { SignatureContext, SignatureInfo } from '../signature.js';

/**
 * Process listers read every process's files in /proc, init's among them (`ps aux` reads /proc/1/environ):
 * that is process discovery, not a look at init's cgroups to tell a container.
 */
const PROCESS_LISTERS = new Set(['ps', 'pgrep', 'pkill', 'pidof', 'top', 'htop', 'pstree', 'killall', 'w', 'fuser', 'lsof']);
const INIT_FILE = /^\/proc\/1\//;

export class AntisandboxContainerCheck extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'antisandbox_container_check',
    description: 'Checks whether it runs in a container or sandbox (init\'s cgroups, container marker files)',
    severity: 2,
    categories: ['anti-sandbox'],
    ttp: ['T1497.001'],
  };

  constructor() {
    super({
      files: filesRead(
        /^\/proc\/1\/(cgroup|sched|environ|mountinfo|mounts|root)$/,
        /^\/(\.dockerenv|run\/\.containerenv|proc\/vz(\/.*)?|proc\/bc(\/.*)?)$/,
      ),
    });
  }

  override ruleMatched(event: BehaviorEvent, ctx: SignatureContext): void {
    const lister = PROCESS_LISTERS.has(basename(ctx.processes.get(event.pid)?.path ?? ''));
    if (lister && event.kind === 'file.open' && INIT_FILE.test(event.path)) return;
    super.ruleMatched(event, ctx);
  }
}
