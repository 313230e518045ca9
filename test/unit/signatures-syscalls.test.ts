import { describe } from 'node:test';
import { EventLog, signatureCases } from '../helpers/signatures.js';

const hex = (text: string) => Buffer.from(text).toString('hex');

/** A program connecting to `address`:4444 and copying the socket (fd 3) onto the descriptors `onto`. */
function socketOntoStdio(pid: number, address: string, onto: number[]): EventLog {
  const log = new EventLog().exec(pid, '/tmp/rs', ['./rs']).connect(pid, address, 4444);
  for (const newfd of onto) {
    log.add(pid, { kind: 'file.dup', oldfd: 3, newfd, object: 'socket', family: 'inet', address, port: 4444, ret: newfd }, { api: 'dup2' });
  }
  return log;
}

/** A server on port 4444 accepting a client (fd 4) and copying it onto the descriptors `onto`. */
function acceptedOntoStdio(pid: number, onto: number[], api = 'dup2'): EventLog {
  const log = new EventLog()
    .exec(pid, '/tmp/bs', ['./bs'])
    .add(pid, { kind: 'net.socket', family: 'inet', type: 1, protocol: 6, ret: 3 })
    .add(pid, { kind: 'net.bind', fd: 3, family: 'inet', address: '0.0.0.0', port: 4444, ret: 0 })
    .add(pid, { kind: 'net.listen', fd: 3, ret: 0 })
    .add(pid, { kind: 'net.accept', fd: 3, ret: 4 });
  for (const newfd of onto) log.add(pid, { kind: 'file.dup', oldfd: 4, newfd, object: 'socket', family: 'inet', ret: newfd }, { api });
  return log;
}

/** The Python one-liner: the interpreter itself connects and moves the socket onto 0, 1, 2, then spawns a shell on a pty. */
function pythonPtyShell(pid: number): EventLog {
  const log = new EventLog().exec(pid, '/usr/bin/python3', ['python3', '-c', 'import socket,os,pty;...']).connect(pid, '203.0.113.9', 9001);
  for (const newfd of [0, 1, 2]) log.add(pid, { kind: 'file.dup', oldfd: 3, newfd, object: 'socket', family: 'inet', address: '203.0.113.9', port: 9001, ret: newfd }, { api: 'dup2' });
  log.fork(pid, pid + 1);
  for (const newfd of [0, 1, 2]) log.add(pid + 1, { kind: 'file.dup', oldfd: 5, newfd, object: 'file', path: '/dev/pts/0', ret: newfd }, { api: 'dup2' });
  return log.exec(pid + 1, '/bin/sh', ['/bin/sh']);
}

/** A parent that forks a child which starts its own session (setsid), seen from the parent's exec on. */
function forkedSession(parentPath: string): EventLog {
  const log = new EventLog();
  if (parentPath) log.exec(500, parentPath, [parentPath]);
  return log.fork(500, 501).call(501, 'setsid', {}, 501);
}

describe('signatures on decoded system calls', () => {
  signatureCases([
    {
      signature: 'reverse_shell',
      title: 'a remote socket dup2ed onto stdin, stdout and stderr, then sh -c id',
      scenario: () => ({ events: socketOntoStdio(450, '203.0.113.7', [0, 1, 2]).exec(450, '/bin/sh', ['sh', '-c', 'id']) }),
    },
    {
      signature: 'reverse_shell',
      title: 'the socket copied in the parent, the shell started by a child',
      scenario: () => ({ events: socketOntoStdio(451, '203.0.113.7', [0, 1]).fork(451, 452).exec(452, '/bin/bash', ['bash', '-c', 'uname -a']) }),
    },
    {
      signature: 'reverse_shell',
      title: 'a pipe made stdin of a shell command (every shell pipeline)',
      matches: false,
      scenario: () => ({
        events: new EventLog()
          .exec(453, '/bin/sh', ['sh', '/tmp/sample.sh'])
          .add(453, { kind: 'file.dup', oldfd: 4, newfd: 0, object: 'pipe', ret: 0 }, { api: 'dup2' })
          .add(453, { kind: 'file.dup', oldfd: 5, newfd: 1, object: 'pipe', ret: 1 }, { api: 'dup2' })
          .exec(453, '/bin/sh', ['sh', '-c', 'sort']),
      }),
    },
    {
      signature: 'reverse_shell',
      title: 'a loopback socket on stdio (a local service handing a client to a helper)',
      matches: false,
      scenario: () => ({ events: socketOntoStdio(454, '127.0.0.1', [0, 1, 2]).exec(454, '/bin/sh', ['sh', '-c', 'id']) }),
    },
    {
      signature: 'reverse_shell',
      title: 'a remote socket on stdout only, then a program that is no shell',
      matches: false,
      scenario: () => ({ events: socketOntoStdio(455, '203.0.113.7', [1]).exec(455, '/usr/bin/id', ['id']) }),
    },
    {
      signature: 'reverse_shell',
      title: 'a Python one-liner: the interpreter dup2s the socket onto stdio and spawns a shell on a pty',
      scenario: () => ({ events: pythonPtyShell(456) }),
    },
    {
      signature: 'reverse_shell',
      title: 'the socket copied with fcntl F_DUPFD onto stdin and stdout, then perl',
      scenario: () => {
        const log = new EventLog().exec(458, '/tmp/rs', ['./rs']).connect(458, '203.0.113.7', 443);
        for (const newfd of [0, 1]) log.add(458, { kind: 'file.dup', oldfd: 3, newfd, object: 'socket', family: 'inet', address: '203.0.113.7', port: 443, ret: newfd }, { api: 'fcntl' });
        return { events: log.exec(458, '/usr/bin/perl', ['perl', '-e', 'print `id`']) };
      },
    },
    {
      signature: 'reverse_shell',
      title: 'a socket inherited on stdin and stdout from before tracing, then bash',
      scenario: () => ({
        events: new EventLog()
          .add(460, { kind: 'file.dup', oldfd: 0, newfd: 1, object: 'socket', family: 'inet', address: '198.51.100.3', port: 8443, ret: 1 }, { api: 'dup2' })
          .add(460, { kind: 'file.dup', oldfd: 1, newfd: 0, object: 'socket', family: 'inet', address: '198.51.100.3', port: 8443, ret: 0 }, { api: 'dup2' })
          .exec(460, '/bin/bash', ['bash']),
      }),
    },
    {
      signature: 'reverse_shell',
      title: 'an accepted client handed to a shell (a bind shell, not a reverse one)',
      matches: false,
      scenario: () => ({ events: acceptedOntoStdio(461, [0, 1, 2]).exec(461, '/bin/sh', ['sh', '-c', 'id']) }),
    },
    {
      signature: 'reverse_shell',
      title: 'a remote socket on stdin and stdout, then the descriptors given back to files before the shell',
      matches: false,
      scenario: () => {
        const log = socketOntoStdio(462, '203.0.113.7', [0, 1]);
        for (const newfd of [0, 1]) log.add(462, { kind: 'file.dup', oldfd: 5, newfd, object: 'file', path: '/dev/null', ret: newfd }, { api: 'dup2' });
        return { events: log.exec(462, '/bin/sh', ['sh', '-c', 'id']) };
      },
    },
    {
      signature: 'bind_shell',
      title: 'listen, accept, the client dup2ed onto stdin, stdout and stderr, then sh',
      scenario: () => ({ events: acceptedOntoStdio(470, [0, 1, 2]).exec(470, '/bin/sh', ['/bin/sh', '-i']) }),
    },
    {
      signature: 'bind_shell',
      title: 'a forking server: the child dup3s the accepted client onto stdio and runs python',
      scenario: () => {
        const log = acceptedOntoStdio(471, []).fork(471, 472);
        for (const newfd of [0, 1, 2]) log.add(472, { kind: 'file.dup', oldfd: 4, newfd, object: 'socket', family: 'inet', ret: newfd }, { api: 'dup3' });
        return { events: log.exec(472, '/usr/bin/python3', ['python3', '-i']) };
      },
    },
    {
      signature: 'bind_shell',
      title: 'a server writing its answers to an accepted client, no shell',
      matches: false,
      scenario: () => ({ events: acceptedOntoStdio(473, [1]).exec(473, '/usr/bin/id', ['id']) }),
    },
    {
      signature: 'bind_shell',
      title: 'an outbound connection handed to a shell (a reverse shell, not a bind one)',
      matches: false,
      scenario: () => ({ events: socketOntoStdio(474, '203.0.113.7', [0, 1, 2]).exec(474, '/bin/sh', ['sh', '-c', 'id']) }),
    },
    {
      signature: 'sleep_evasion',
      title: 'a 90-second sleep the supervisor cut short',
      scenario: () => ({
        events: new EventLog().exec(540, '/bin/sleep', ['sleep', '90']).add(540, { kind: 'process.sleep', seconds: 90, ret: 0 }, { api: 'clock_nanosleep' }),
        report: { debug: { log: [], cuckoo: [], action: [], errors: [], skipped_sleeps: [{ pid: 540, call: 'clock_nanosleep', seconds: 90, time: 1_700_000_001 }] } },
      }),
    },
    {
      signature: 'sleep_evasion',
      title: 'a short sleep the sample slept through (nothing skipped)',
      matches: false,
      scenario: () => ({
        events: new EventLog().exec(541, '/bin/sleep', ['sleep', '2']).add(541, { kind: 'process.sleep', seconds: 2, ret: 0 }, { api: 'clock_nanosleep' }),
        report: { debug: { log: [], cuckoo: [], action: [], errors: [] } },
      }),
    },
    {
      signature: 'sleep_evasion',
      title: 'a skipped sleep of a process the trace never saw executed (not the sample)',
      matches: false,
      scenario: () => ({
        events: new EventLog().add(542, { kind: 'process.sleep', seconds: 600, ret: 0 }, { api: 'nanosleep' }),
        report: { debug: { log: [], cuckoo: [], action: [], errors: [], skipped_sleeps: [{ pid: 542, call: 'nanosleep', seconds: 600, time: 1_700_000_001 }] } },
      }),
    },
    {
      signature: 'daemonize',
      title: 'the double fork: fork, the parent exits, setsid, fork again',
      scenario: () => ({ events: forkedSession('/tmp/daemon').add(500, { kind: 'process.exit', code: 0 }).fork(501, 502).add(501, { kind: 'process.exit', code: 0 }) }),
    },
    {
      signature: 'daemonize',
      title: 'a child that starts a session and outlives its parent',
      scenario: () => ({ events: forkedSession('/tmp/daemon').add(500, { kind: 'process.exit', code: 0 }) }),
    },
    {
      signature: 'daemonize',
      title: 'a session started by a child that its parent outlives (setsid(1) run by a script)',
      matches: false,
      scenario: () => ({ events: forkedSession('/bin/sh').add(501, { kind: 'process.exit', code: 0 }).add(500, { kind: 'process.exit', code: 0 }) }),
    },
    {
      signature: 'daemonize',
      title: 'a session started before the sample ran (nestbox launching it)',
      matches: false,
      scenario: () => ({ events: forkedSession('').add(500, { kind: 'process.exit', code: 0 }).fork(501, 502) }),
    },
    {
      signature: 'daemonize',
      title: "Wine's loader starting a Windows program's child in a session of its own (CreateProcess under Wine)",
      matches: false,
      scenario: () => ({ events: forkedSession('/usr/lib/wine/wine64').add(500, { kind: 'process.exit', code: 0 }).fork(501, 502) }),
    },
    {
      signature: 'daemonize',
      title: 'a failed setsid (already a group leader)',
      matches: false,
      scenario: () => ({ events: new EventLog().exec(510, '/tmp/d', ['d']).fork(510, 511).call(511, 'setsid', {}, -1).add(510, { kind: 'process.exit', code: 0 }) }),
    },
    {
      signature: 'long_sleep',
      title: 'a ten-minute nanosleep before acting',
      scenario: () => ({ events: new EventLog().exec(520, '/tmp/s', ['s']).add(520, { kind: 'process.sleep', seconds: 600, ret: 0 }, { api: 'nanosleep' }) }),
    },
    {
      signature: 'long_sleep',
      title: 'a one-second pause',
      matches: false,
      scenario: () => ({ events: new EventLog().exec(521, '/bin/sleep', ['sleep', '1']).add(521, { kind: 'process.sleep', seconds: 1, ret: 0 }, { api: 'clock_nanosleep' }) }),
    },
    {
      signature: 'long_sleep',
      title: 'a long wait of something that ran before the sample',
      matches: false,
      scenario: () => ({ events: new EventLog().add(522, { kind: 'process.sleep', seconds: 3600, ret: 0 }, { api: 'nanosleep' }) }),
    },
    {
      signature: 'raw_tcp_protocol',
      title: 'a JSON login line to a pool over raw TCP',
      scenario: () => ({
        events: new EventLog()
          .exec(530, '/tmp/m', ['m'])
          .connect(530, '198.51.100.20', 3333)
          .add(530, { kind: 'net.send', fd: 3, family: 'inet', address: '198.51.100.20', port: 3333, bytes: 40, payload: hex('{"id":1,"method":"login"}\n') }, { api: 'sendto' }),
      }),
    },
    {
      signature: 'raw_tcp_protocol',
      title: 'an HTTP request',
      matches: false,
      scenario: () => ({
        events: new EventLog()
          .exec(531, '/usr/bin/curl', ['curl', 'http://198.51.100.20/'])
          .connect(531, '198.51.100.20', 80)
          .add(531, { kind: 'net.send', fd: 3, family: 'inet', address: '198.51.100.20', port: 80, bytes: 40, payload: hex('GET / HTTP/1.1\r\nHost: x\r\n\r\n') }, { api: 'sendto' }),
      }),
    },
    {
      signature: 'raw_tcp_protocol',
      title: 'a datagram (UDP) payload',
      matches: false,
      scenario: () => ({
        events: new EventLog()
          .exec(532, '/tmp/u', ['u'])
          .add(532, { kind: 'net.socket', family: 'inet', type: 2, protocol: 17, ret: 3 })
          .add(532, { kind: 'net.send', fd: 3, family: 'inet', address: '198.51.100.20', port: 9999, bytes: 4, payload: hex('ping') }, { api: 'sendto' }),
      }),
    },
  ]);
});
