import { RuleSignature } from '../rule-signature.js';
import type { SignatureInfo } from '../signature.js';

export class ReverseShellCommandLine extends RuleSignature {
  readonly info: SignatureInfo = {
    name: 'reverse_shell_command_line',
    description: 'Runs a command line that connects a shell to a remote host (reverse-shell one-liner)',
    severity: 4,
    categories: ['backdoor'],
    ttp: ['T1059.004'],
  };

  constructor() {
    super({
      programs: [
        // nc -e /bin/sh host port, ncat -c 'sh' host port
        { program: /^(nc|ncat|netcat)(\.(traditional|openbsd))?$/, args: (args) => args.some((arg) => /^-[a-zA-Z]*[ec]$/.test(arg)) },
      ],
      commandLines: [
        /\/dev\/(tcp|udp)\/[^/\s]+\/\d+/,
        /\bsocat\b.*\b(exec|system):/i,
        /\bmkfifo\b.*\b(nc|ncat|netcat|telnet|openssl)\b/,
        /\b(python[0-9.]*|perl|ruby|php|lua)\b.*\bsocket\b.*(pty\.spawn|subprocess|\/bin\/(ba)?sh|\bexec\b|popen|dup2)/i,
        /\b(telnet|openssl\s+s_client)\b.*\|\s*(\S*\/)?(ba)?sh\b/,
      ],
    });
  }
}
