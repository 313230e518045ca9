import { describe } from 'node:test';
import { EventLog, signatureCases } from '../helpers/signatures.js';

describe('credential access signatures', () => {
  signatureCases([
    {
      signature: 'credential_shadow',
      title: 'reading /etc/shadow',
      scenario: () => ({ events: new EventLog().exec(600, '/bin/cat', ['cat', '/etc/shadow']).read(600, '/etc/shadow') }),
    },
    {
      signature: 'credential_shadow',
      title: 'a denied attempt still shows intent',
      scenario: () => ({ events: new EventLog().add(601, { kind: 'file.open', path: '/etc/shadow', flags: 0, mode: 0, ret: -13 }) }),
    },
    {
      signature: 'credential_shadow',
      title: 'reading /etc/passwd to resolve user names',
      matches: false,
      scenario: () => ({ events: new EventLog().read(602, '/etc/passwd') }),
    },
    {
      signature: 'credential_ssh_keys',
      title: 'reading root\'s private key',
      scenario: () => ({ events: new EventLog().read(610, '/root/.ssh/id_rsa') }),
    },
    {
      signature: 'credential_ssh_keys',
      title: 'reading a public key and known_hosts',
      matches: false,
      scenario: () => ({ events: new EventLog().read(611, '/root/.ssh/id_rsa.pub').read(611, '/root/.ssh/known_hosts') }),
    },
    {
      signature: 'credential_browser',
      title: 'Firefox logins and Chrome Login Data',
      scenario: () => ({
        events: new EventLog()
          .read(620, '/home/user/.mozilla/firefox/x1y2z3.default-release/logins.json')
          .read(620, '/home/user/.config/google-chrome/Default/Login Data'),
      }),
    },
    {
      signature: 'credential_cloud_config',
      title: 'AWS credentials and a kube config',
      scenario: () => ({ events: new EventLog().read(630, '/root/.aws/credentials').read(630, '/root/.kube/config') }),
    },
    {
      signature: 'crypto_wallet_access',
      title: 'a Bitcoin wallet and an Electrum wallet',
      scenario: () => ({ events: new EventLog().read(640, '/home/user/.bitcoin/wallet.dat').read(640, '/home/user/.electrum/wallets/default_wallet') }),
    },
    {
      signature: 'proc_mem_dump',
      title: 'reading another process\'s memory',
      scenario: () => ({ events: new EventLog().read(650, '/proc/1234/maps').read(650, '/proc/1234/mem') }),
    },
    {
      signature: 'proc_mem_dump',
      title: 'reading its own memory',
      matches: false,
      scenario: () => ({ events: new EventLog().read(651, '/proc/self/mem').read(651, '/proc/651/mem') }),
    },
  ]);
});

describe('privilege escalation signatures', () => {
  signatureCases([
    {
      signature: 'privesc_setuid_root',
      title: 'setuid(0)',
      scenario: () => ({ events: new EventLog().add(700, { kind: 'process.setid', call: 'setuid', ids: [0], ret: -1 }) }),
    },
    {
      signature: 'privesc_setuid_root',
      title: 'setresgid(0, 0, 0)',
      scenario: () => ({ events: new EventLog().add(701, { kind: 'process.setid', call: 'setresgid', ids: [0, 0, 0], ret: 0 }) }),
    },
    {
      signature: 'privesc_setuid_root',
      title: 'dropping privileges to uid 1000',
      matches: false,
      scenario: () => ({ events: new EventLog().add(702, { kind: 'process.setid', call: 'setuid', ids: [1000], ret: 0 }) }),
    },
    {
      signature: 'suid_bit_set',
      title: 'chmod 4755 as a system call',
      scenario: () => ({ events: new EventLog().add(710, { kind: 'file.chmod', path: '/tmp/.sh', mode: 0o4755, ret: 0 }) }),
    },
    {
      signature: 'suid_bit_set',
      title: 'chmod u+s on the command line',
      scenario: () => ({ events: new EventLog().exec(711, '/bin/chmod', ['chmod', 'u+s', '/tmp/.sh']) }),
    },
    {
      signature: 'suid_bit_set',
      title: 'chmod 755',
      matches: false,
      scenario: () => ({ events: new EventLog().exec(712, '/bin/chmod', ['chmod', '0755', '/tmp/x']).add(712, { kind: 'file.chmod', path: '/tmp/x', mode: 0o755, ret: 0 }) }),
    },
    {
      signature: 'account_passwd_modified',
      title: 'a uid-0 user appended to /etc/passwd',
      scenario: () => ({ events: new EventLog().append(720, '/etc/passwd') }),
    },
    {
      signature: 'account_passwd_modified',
      title: '/etc/passwd replaced by rename, as useradd does',
      scenario: () => ({ events: new EventLog().write(721, '/etc/passwd+').add(721, { kind: 'file.rename', from: '/etc/passwd+', to: '/etc/passwd', ret: 0 }) }),
    },
    {
      signature: 'account_passwd_modified',
      title: 'reading /etc/passwd',
      matches: false,
      scenario: () => ({ events: new EventLog().read(722, '/etc/passwd').read(722, '/etc/group') }),
    },
    {
      signature: 'sudoers_modified',
      title: 'a NOPASSWD rule dropped in /etc/sudoers.d',
      scenario: () => ({ events: new EventLog().write(730, '/etc/sudoers.d/99-ops') }),
    },
    {
      signature: 'account_created_command',
      title: 'useradd',
      scenario: () => ({ events: new EventLog().exec(740, '/usr/sbin/useradd', ['useradd', '-o', '-u', '0', '-m', 'sysadm']) }),
    },
    {
      signature: 'kernel_module_load',
      title: 'finit_module',
      scenario: () => ({ events: new EventLog().add(750, { kind: 'module.load', call: 'finit_module', path: '/tmp/rk.ko', ret: -1 }) }),
    },
    {
      signature: 'kernel_module_load',
      title: 'insmod',
      scenario: () => ({ events: new EventLog().exec(751, '/sbin/insmod', ['insmod', '/tmp/rk.ko']) }),
    },
    {
      signature: 'kernel_module_load',
      title: 'modprobe -r and lsmod',
      matches: false,
      scenario: () => ({ events: new EventLog().exec(752, '/sbin/modprobe', ['modprobe', '-r', 'pcspkr']).exec(753, '/sbin/lsmod', ['lsmod']) }),
    },
    {
      signature: 'process_injection_ptrace',
      title: 'PTRACE_ATTACH then POKETEXT into another process',
      scenario: () => ({
        events: new EventLog().add(760, { kind: 'process.ptrace', request: 16, target: 1, ret: 0 }).add(760, { kind: 'process.ptrace', request: 4, target: 1, ret: 0 }),
      }),
    },
    {
      signature: 'process_injection_ptrace',
      title: 'PTRACE_TRACEME is no injection',
      matches: false,
      scenario: () => ({ events: new EventLog().add(761, { kind: 'process.ptrace', request: 0, target: 0, ret: 0 }) }),
    },
    {
      signature: 'system_binary_modified',
      title: 'a trojanised ps moved over /bin/ps',
      scenario: () => ({ events: new EventLog().write(770, '/tmp/ps').add(770, { kind: 'file.rename', from: '/tmp/ps', to: '/bin/ps', ret: 0 }) }),
    },
    {
      signature: 'system_binary_modified',
      title: 'running system programs',
      matches: false,
      scenario: () => ({ events: new EventLog().exec(771, '/bin/ps', ['ps']).read(771, '/usr/lib/x86_64-linux-gnu/libprocps.so.8') }),
    },
    {
      signature: 'system_binary_modified',
      title: 'an installer linking its program into /usr/local/bin',
      matches: false,
      scenario: () => ({ events: new EventLog().add(772, { kind: 'file.link', from: '/opt/mytool/bin/mytool', to: '/usr/local/bin/mytool', symbolic: true, ret: 0 }).write(772, '/usr/local/bin/other') }),
    },
  ]);
});
