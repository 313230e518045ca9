import { describe } from 'node:test';
import { EventLog, O, signatureCases } from '../helpers/signatures.js';

describe('defence evasion signatures', () => {
  signatureCases([
    {
      signature: 'self_deletion',
      title: 'a binary deleting itself',
      scenario: () => ({ events: new EventLog().exec(400, '/tmp/sample.bin', ['./sample.bin']).add(400, { kind: 'file.delete', path: '/tmp/sample.bin', ret: 0 }) }),
    },
    {
      signature: 'self_deletion',
      title: 'a script removing itself with rm "$0"',
      scenario: () => ({
        events: new EventLog()
          .exec(401, '/bin/sh', ['sh', '/tmp/run.sh'])
          .fork(401, 402)
          .exec(402, '/bin/rm', ['rm', '-f', '/tmp/run.sh'])
          .add(402, { kind: 'file.delete', path: '/tmp/run.sh', ret: 0 }),
      }),
    },
    {
      signature: 'self_deletion',
      title: 'a program deleting its own temporary file',
      matches: false,
      scenario: () => ({ events: new EventLog().exec(403, '/usr/bin/sort', ['sort', 'x']).write(403, '/tmp/sortAbc').add(403, { kind: 'file.delete', path: '/tmp/sortAbc', ret: 0 }) }),
    },
    {
      signature: 'process_rename_masquerade',
      title: 'prctl rename to a kworker name',
      scenario: () => ({ events: new EventLog().exec(410, '/tmp/.cache/xm', ['./xm']).add(410, { kind: 'process.rename', name: 'kworker/0:2' }) }),
    },
    {
      signature: 'process_rename_masquerade',
      title: 'a rename to sshd by a program that is not sshd',
      scenario: () => ({ events: new EventLog().exec(411, '/var/tmp/b', ['b']).add(411, { kind: 'process.rename', name: 'sshd' }) }),
    },
    {
      signature: 'process_rename_masquerade',
      title: 'thread names an ordinary program gives',
      matches: false,
      scenario: () => ({
        events: new EventLog()
          .exec(412, '/usr/bin/node', ['node', 'server.js'])
          .add(412, { kind: 'process.rename', name: 'node' })
          .add(412, { kind: 'process.rename', name: 'libuv-worker' }),
      }),
    },
    {
      signature: 'argv0_spoofing',
      title: 'a miner started as [kthreadd]',
      scenario: () => ({ events: new EventLog().exec(420, '/tmp/.x/m', ['[kthreadd]', '-c', 'cfg']) }),
    },
    {
      signature: 'argv0_spoofing',
      title: 'python started under the name sshd',
      scenario: () => ({ events: new EventLog().exec(421, '/usr/bin/python3', ['/usr/sbin/sshd', '-D']) }),
    },
    {
      signature: 'argv0_spoofing',
      title: 'a login shell (-bash) and an ordinary program',
      matches: false,
      scenario: () => ({ events: new EventLog().exec(422, '/bin/bash', ['-bash']).exec(423, '/usr/bin/python3', ['python3', 'x.py']) }),
    },
    {
      signature: 'argv0_spoofing',
      title: 'scripts run by their #! line (the kernel puts the interpreter in argv[0])',
      matches: false,
      scenario: () => ({
        events: new EventLog()
          .exec(424, '/tmp/benign.sh', ['/bin/sh', '/tmp/benign.sh'])
          .exec(425, '/tmp/tool', ['/usr/bin/env', 'bash', '/tmp/tool', '-x']),
      }),
    },
    {
      signature: 'argv0_spoofing',
      title: 'a script given a daemon name in argv[0] by its caller',
      scenario: () => ({ events: new EventLog().exec(426, '/tmp/run.sh', ['sshd', '-D']) }),
    },
    {
      signature: 'antidebug_ptrace_traceme',
      title: 'PTRACE_TRACEME failing under a tracer',
      scenario: () => ({ events: new EventLog().add(430, { kind: 'process.ptrace', request: 0, target: 0, ret: -1 }) }),
    },
    {
      signature: 'antivm_dmi',
      title: 'reading the DMI product name',
      scenario: () => ({ events: new EventLog().read(440, '/sys/class/dmi/id/product_name').read(440, '/sys/class/dmi/id/sys_vendor') }),
    },
    {
      signature: 'antivm_dmi',
      title: 'running dmidecode',
      scenario: () => ({ events: new EventLog().exec(441, '/usr/sbin/dmidecode', ['dmidecode', '-s', 'system-product-name']) }),
    },
    {
      signature: 'antivm_hypervisor_check',
      title: 'grep hypervisor /proc/cpuinfo',
      scenario: () => ({ events: new EventLog().exec(442, '/bin/sh', ['sh', '-c', 'grep -q hypervisor /proc/cpuinfo && exit 0']) }),
    },
    {
      signature: 'antivm_hypervisor_check',
      title: 'reading /sys/hypervisor/type',
      scenario: () => ({ events: new EventLog().read(443, '/sys/hypervisor/type') }),
    },
    {
      signature: 'antivm_hypervisor_check',
      title: 'reading /proc/cpuinfo alone',
      matches: false,
      scenario: () => ({ events: new EventLog().read(444, '/proc/cpuinfo') }),
    },
    {
      signature: 'antisandbox_container_check',
      title: 'reading init\'s cgroups and /.dockerenv',
      scenario: () => ({ events: new EventLog().read(450, '/proc/1/cgroup').read(450, '/.dockerenv') }),
    },
    {
      signature: 'antisandbox_container_check',
      title: 'a program reading its own cgroup (JVMs do)',
      matches: false,
      scenario: () => ({ events: new EventLog().read(451, '/proc/self/cgroup') }),
    },
    {
      signature: 'antisandbox_container_check',
      title: 'ps aux reading every process\'s environ, init\'s too',
      matches: false,
      scenario: () => ({ events: new EventLog().exec(452, '/usr/bin/ps', ['ps', 'aux']).read(452, '/proc/1/stat').read(452, '/proc/1/environ').read(452, '/proc/77/environ') }),
    },
    {
      signature: 'antisandbox_container_check',
      title: 'a sample reading init\'s environment itself',
      scenario: () => ({ events: new EventLog().exec(453, '/tmp/check', ['./check']).read(453, '/proc/1/environ') }),
    },
    {
      signature: 'hidden_file_created',
      title: 'a hidden folder under /usr/lib',
      scenario: () => ({ events: new EventLog().add(460, { kind: 'file.mkdir', path: '/usr/lib/.sshd', mode: 0o755, ret: 0 }) }),
    },
    {
      signature: 'hidden_file_created',
      title: 'a "..." folder in /tmp',
      scenario: () => ({ events: new EventLog().add(461, { kind: 'file.mkdir', path: '/tmp/...', mode: 0o755, ret: 0 }).write(461, '/tmp/.../x') }),
    },
    {
      signature: 'hidden_file_created',
      title: 'X11\'s socket folder and dotfiles in a home folder',
      matches: false,
      scenario: () => ({
        events: new EventLog()
          .add(462, { kind: 'file.mkdir', path: '/tmp/.X11-unix', mode: 0o1777, ret: 0 })
          .write(462, '/root/.cache/app/state')
          .write(462, '/home/user/.lesshst'),
      }),
    },
    {
      signature: 'history_clearing',
      title: 'truncating .bash_history',
      scenario: () => ({ events: new EventLog().open(470, '/root/.bash_history', O.WRONLY | O.CREAT | O.TRUNC) }),
    },
    {
      signature: 'history_clearing',
      title: 'linking .bash_history to /dev/null',
      scenario: () => ({ events: new EventLog().add(471, { kind: 'file.link', from: '/dev/null', to: '/root/.bash_history', symbolic: true, ret: 0 }) }),
    },
    {
      signature: 'history_clearing',
      title: 'unset HISTFILE in a shell string',
      scenario: () => ({ events: new EventLog().exec(472, '/bin/bash', ['bash', '-c', 'unset HISTFILE; export HISTSIZE=0; ./x']) }),
    },
    {
      signature: 'history_clearing',
      title: 'a shell appending its history at exit',
      matches: false,
      scenario: () => ({ events: new EventLog().append(473, '/root/.bash_history') }),
    },
    {
      signature: 'timestomp',
      title: 'touch -r copying the times of /bin/ls',
      scenario: () => ({ events: new EventLog().exec(480, '/usr/bin/touch', ['touch', '-r', '/bin/ls', '/usr/bin/.updater']) }),
    },
    {
      signature: 'timestomp',
      title: 'plain touch',
      matches: false,
      scenario: () => ({ events: new EventLog().exec(481, '/usr/bin/touch', ['touch', '/tmp/stamp']) }),
    },
    {
      signature: 'log_wiping',
      title: 'deleting auth.log and emptying wtmp',
      scenario: () => ({
        events: new EventLog().add(490, { kind: 'file.delete', path: '/var/log/auth.log', ret: 0 }).open(490, '/var/log/wtmp', O.WRONLY | O.TRUNC),
      }),
    },
    {
      signature: 'log_wiping',
      title: 'journalctl --vacuum-time',
      scenario: () => ({ events: new EventLog().exec(491, '/bin/journalctl', ['journalctl', '--vacuum-time=1s']) }),
    },
    {
      signature: 'log_wiping',
      title: 'a program appending to its own log',
      matches: false,
      scenario: () => ({ events: new EventLog().append(492, '/var/log/myapp.log') }),
    },
    {
      signature: 'kill_security_tools',
      title: 'pkill of a cloud security agent',
      scenario: () => ({ events: new EventLog().exec(500, '/usr/bin/pkill', ['pkill', '-9', 'AliYunDun']) }),
    },
    {
      signature: 'kill_security_tools',
      title: 'systemctl stop auditd',
      scenario: () => ({ events: new EventLog().exec(501, '/bin/systemctl', ['systemctl', 'stop', 'auditd']) }),
    },
    {
      signature: 'kill_security_tools',
      title: 'systemctl stop nginx',
      matches: false,
      scenario: () => ({ events: new EventLog().exec(502, '/bin/systemctl', ['systemctl', 'stop', 'nginx']) }),
    },
    {
      signature: 'disable_selinux_apparmor',
      title: 'setenforce 0',
      scenario: () => ({ events: new EventLog().exec(510, '/usr/sbin/setenforce', ['setenforce', '0']) }),
    },
    {
      signature: 'disable_selinux_apparmor',
      title: 'SELinux disabled in its config and AppArmor stopped',
      scenario: () => ({
        events: new EventLog().write(511, '/etc/selinux/config').exec(512, '/bin/systemctl', ['systemctl', 'stop', 'apparmor']),
      }),
    },
    {
      signature: 'firewall_tampering',
      title: 'iptables -F',
      scenario: () => ({ events: new EventLog().exec(520, '/usr/sbin/iptables', ['iptables', '-F']) }),
    },
    {
      signature: 'firewall_tampering',
      title: 'ufw disable and nft flush ruleset',
      scenario: () => ({
        events: new EventLog().exec(521, '/usr/sbin/ufw', ['ufw', 'disable']).exec(522, '/usr/sbin/nft', ['nft', 'flush', 'ruleset']),
      }),
    },
    {
      signature: 'firewall_tampering',
      title: 'a failed attempt: iptables is not installed (ENOENT)',
      scenario: () => ({ events: new EventLog().exec(523, '/usr/sbin/iptables', ['iptables', '-I', 'INPUT', '-p', 'tcp', '--dport', '22', '-j', 'ACCEPT'], -2) }),
    },
    {
      signature: 'firewall_tampering',
      title: 'listing rules',
      matches: false,
      scenario: () => ({
        events: new EventLog().exec(524, '/usr/sbin/iptables', ['iptables', '-L', '-n', '-v']).exec(525, '/usr/sbin/nft', ['nft', 'list', 'ruleset']),
      }),
    },
    {
      signature: 'chattr_immutable',
      title: 'chattr +i on its cron file',
      scenario: () => ({ events: new EventLog().exec(530, '/usr/bin/chattr', ['chattr', '+i', '/etc/cron.d/sysupdate']) }),
    },
    {
      signature: 'chattr_immutable',
      title: 'chattr -i',
      matches: false,
      scenario: () => ({ events: new EventLog().exec(531, '/usr/bin/chattr', ['chattr', '-i', '/etc/hosts']) }),
    },
    {
      signature: 'sysctl_security_tamper',
      title: 'ASLR turned off through /proc/sys',
      scenario: () => ({ events: new EventLog().write(540, '/proc/sys/kernel/randomize_va_space', 2) }),
    },
    {
      signature: 'sysctl_security_tamper',
      title: 'sysctl -w kernel.yama.ptrace_scope=0',
      scenario: () => ({ events: new EventLog().exec(541, '/sbin/sysctl', ['sysctl', '-w', 'kernel.yama.ptrace_scope=0']) }),
    },
    {
      signature: 'sysctl_security_tamper',
      title: 'reading kernel settings',
      matches: false,
      scenario: () => ({ events: new EventLog().read(542, '/proc/sys/kernel/randomize_va_space').exec(543, '/sbin/sysctl', ['sysctl', '-a']) }),
    },
    {
      signature: 'packed_binary',
      title: 'a UPX header in the sample',
      scenario: () => ({ files: { binary: Buffer.concat([Buffer.from('\x7fELF\x02\x01\x01'), Buffer.alloc(200), Buffer.from('UPX!'), Buffer.alloc(100)]) } }),
    },
    {
      signature: 'packed_binary',
      title: 'a packer and a high-entropy code segment named by static analysis',
      scenario: () => ({
        report: { static: { packer: { names: ['UPX'], entropy: 7.6, high_entropy: true, high_entropy_sections: ['LOAD@4194304'] } } },
      }),
    },
    {
      signature: 'packed_binary',
      title: 'an ordinary compiled program',
      matches: false,
      scenario: () => ({
        files: { binary: Buffer.concat([Buffer.from('\x7fELF\x02\x01\x01'), Buffer.alloc(4000, 0x90)]) },
        report: {
          static: { elf: {}, packer: { names: [], entropy: 5.8, high_entropy: false, high_entropy_sections: [] } },
          strings: ['GCC: (Debian 12.2.0-14) 12.2.0'],
        },
      }),
    },
  ]);
});
