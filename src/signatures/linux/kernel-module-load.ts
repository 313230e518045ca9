import { MODIFY } from '../helpers/file-access.js';
import { RuleSignature } from '../rule-signature.js';
import type { EventOf, SignatureContext, SignatureInfo } from '../signature.js';

// modprobe flags that remove, simulate or only show.
const NOT_LOADING = new Set(['-r', '--remove', '-n', '--dry-run', '-c', '--showconfig', '-l', '--list', '-D', '--show-depends']);

export class KernelModuleLoad extends RuleSignature<'module.load'> {
  readonly info: SignatureInfo = {
    name: 'kernel_module_load',
    description: 'Loads a kernel module or configures modules to load at boot',
    severity: 4,
    categories: ['rootkit', 'persistence'],
    ttp: ['T1547.006', 'T1014'],
  };

  constructor() {
    super(
      {
        programs: [{ program: /^insmod$/ }, { program: /^modprobe$/, args: (args) => args.length > 0 && !args.some((arg) => NOT_LOADING.has(arg)) }],
        files: [{ path: /^\/etc\/(modules|modules-load\.d\/.+|modprobe\.d\/.+)$/, access: MODIFY }],
      },
      ['module.load'],
    );
  }

  override onEvent(event: EventOf<'module.load'>, ctx: SignatureContext): void {
    this.markEvent(event, ctx);
  }
}
