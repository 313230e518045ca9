import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { describe } from 'node:test';
import type { DroppedFile } from '../../src/report/report-types.js';
import { EventLog, O, signatureCases } from '../helpers/signatures.js';

// Built from halves so that this test file itself is not flagged by scanners.
const EICAR = 'X5O!P%@AP[4\\PZX54(P^)7CC)7}$' + 'EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*';

function dropped(name: string, path: string, filepath: string, type = 'ASCII text'): DroppedFile {
  return { name, path, filepath, pids: [900], size: 100, crc32: '', md5: '', sha1: '', sha256: '', sha512: '', ssdeep: null, type, yara: [], urls: [] };
}

function encryptInPlace(count: number, extension: (index: number) => string): EventLog {
  const log = new EventLog().exec(900, '/tmp/sample.bin', ['./sample.bin']);
  for (let index = 0; index < count; index++) {
    const file = `/home/user/Documents/report-${index}.docx`;
    log.open(900, file, O.RDWR).add(900, { kind: 'file.write', path: file, bytes: 20480 });
    log.add(900, { kind: 'file.rename', from: file, to: `${file}.${extension(index)}`, ret: 0 });
  }
  return log;
}

/** A program reading each of `count` documents and writing its content back over it, opened `how`. */
function rewriteInPlace(count: number, how: 'reopen-truncate' | 'read-write'): EventLog {
  const log = new EventLog().exec(910, '/usr/bin/python3', ['python3', '/tmp/locker.py']);
  for (let index = 0; index < count; index++) {
    const file = `/home/user/Documents/notes-${index}.txt`;
    if (how === 'read-write') log.open(910, file, O.RDWR).add(910, { kind: 'file.write', path: file, bytes: 4096 });
    else log.read(910, file).write(910, file, 4096);
  }
  return log;
}

/** The kept copies of rewriteInPlace's documents, all with the content stored at `stored`. */
function rewrittenDropped(count: number, type: string, stored: string): DroppedFile[] {
  return Array.from({ length: count }, (_, index) => dropped(`notes-${index}.txt`, stored, `/home/user/Documents/notes-${index}.txt`, type));
}

/** tar extracting `count` files of its own archive: each created new, none read before. */
function tarExtraction(count: number): EventLog {
  const log = new EventLog().exec(920, '/bin/tar', ['tar', 'xf', '/tmp/backup.tar', '-C', '/opt/app']);
  log.read(920, '/tmp/backup.tar');
  for (let index = 0; index < count; index++) {
    const file = `/opt/app/lib/module-${index}.py`;
    log.open(920, file, O.WRONLY | O.CREAT | O.CLOEXEC | 0o200).add(920, { kind: 'file.write', path: file, bytes: 2048 });
  }
  return log;
}

/** A build: each source read, an object file written beside it, a log appended to, the objects linked. */
function buildJob(count: number): EventLog {
  const log = new EventLog().exec(930, '/usr/bin/make', ['make', '-j1']);
  for (let index = 0; index < count; index++) {
    log.fork(930, 931 + index).exec(931 + index, '/usr/bin/cc', ['cc', '-c', `src/f${index}.c`, '-o', `src/f${index}.o`]);
    log.read(931 + index, `/tmp/build/src/f${index}.c`).write(931 + index, `/tmp/build/src/f${index}.o`, 9000);
    log.append(930, '/tmp/build/build.log');
    log.read(930, '/tmp/build/build.log');
  }
  for (let index = 0; index < count; index++) log.read(930, `/tmp/build/src/f${index}.o`);
  return log.write(930, '/tmp/build/app', 50000);
}

describe('impact signatures', () => {
  signatureCases([
    {
      signature: 'mass_file_modification',
      title: 'twelve documents read and written back over themselves (reopened and truncated)',
      scenario: () => ({ events: rewriteInPlace(12, 'reopen-truncate') }),
    },
    {
      signature: 'mass_file_modification',
      title: 'twelve documents opened read-write and rewritten',
      scenario: () => ({ events: rewriteInPlace(12, 'read-write') }),
    },
    {
      signature: 'mass_file_modification',
      title: 'twelve documents rewritten in place, their kept copies scrambled (whatever type magic guesses)',
      scenario: () => ({
        files: { 'files/scrambled': randomBytes(4096) },
        events: rewriteInPlace(12, 'reopen-truncate'),
        report: (paths) => ({ dropped: rewrittenDropped(12, 'Squeezed (apple ][) data', join(paths.files, 'scrambled')) }),
      }),
    },
    {
      signature: 'mass_file_modification',
      title: 'twelve text files edited in place (perl -pi), still text among the dropped files',
      matches: false,
      scenario: () => ({
        files: { 'files/edited': 'listen=80\nworkers=4\nserver_name=intranet.example\n'.repeat(40) },
        events: rewriteInPlace(12, 'reopen-truncate'),
        report: (paths) => ({ dropped: rewrittenDropped(12, 'ASCII text', join(paths.files, 'edited')) }),
      }),
    },
    {
      signature: 'mass_file_modification',
      title: 'twelve JPEGs optimised in place (dense, but a format one can name)',
      matches: false,
      scenario: () => ({
        files: { 'files/photo': randomBytes(4096) },
        events: rewriteInPlace(12, 'read-write'),
        report: (paths) => ({ dropped: rewrittenDropped(12, 'JPEG image data, JFIF standard 1.01', join(paths.files, 'photo')) }),
      }),
    },
    {
      signature: 'mass_file_modification',
      title: 'four documents rewritten (an editor saving its files)',
      matches: false,
      scenario: () => ({ events: rewriteInPlace(4, 'reopen-truncate') }),
    },
    {
      signature: 'mass_file_modification',
      title: 'tar extracting two hundred files of its own archive',
      matches: false,
      scenario: () => ({ events: tarExtraction(200) }),
    },
    {
      signature: 'mass_file_modification',
      title: 'a build compiling forty sources, appending to its log and linking',
      matches: false,
      scenario: () => ({ events: buildJob(40) }),
    },
    {
      signature: 'mass_file_rename',
      title: 'twelve documents renamed to .locked',
      scenario: () => ({ events: encryptInPlace(12, () => 'locked') }),
    },
    {
      signature: 'mass_file_rename',
      title: 'encrypted copies written and originals deleted',
      scenario: () => {
        const log = new EventLog();
        for (let index = 0; index < 15; index++) {
          const file = `/srv/share/photo-${index}.jpg`;
          log.read(901, file).write(901, `${file}.crypt`, 300000).add(901, { kind: 'file.delete', path: file, ret: 0 });
        }
        return { events: log };
      },
    },
    {
      signature: 'mass_file_rename',
      title: 'three files renamed to .locked',
      matches: false,
      scenario: () => ({ events: encryptInPlace(3, () => 'locked') }),
    },
    {
      signature: 'mass_file_rename',
      title: 'twelve files each given a different version suffix',
      matches: false,
      scenario: () => ({ events: encryptInPlace(12, (index) => `v${index}`) }),
    },
    {
      signature: 'ransomware_note',
      title: 'the same note written in three folders',
      scenario: () => ({
        events: new EventLog()
          .write(902, '/home/user/HOW_TO_DECRYPT.txt')
          .write(902, '/home/user/Documents/HOW_TO_DECRYPT.txt')
          .write(902, '/srv/share/HOW_TO_DECRYPT.txt'),
      }),
    },
    {
      signature: 'ransomware_note',
      title: 'a dropped note asking for bitcoin',
      scenario: () => ({
        files: { 'files/note.txt': 'All your files have been encrypted!\nTo decrypt them send 0.5 BTC (bitcoin) to ...\nUse Tor Browser.\n' },
        report: (paths) => ({ dropped: [dropped('RESTORE_FILES.txt', join(paths.files, 'note.txt'), '/root/RESTORE_FILES.txt')] }),
      }),
    },
    {
      signature: 'ransomware_note',
      title: 'a README written once',
      matches: false,
      scenario: () => ({ events: new EventLog().write(903, '/tmp/README.txt').write(903, '/opt/app/README.txt') }),
    },
    {
      signature: 'eicar_test_file',
      title: 'the sample is the EICAR file',
      scenario: () => ({ files: { binary: `${EICAR}\r\n` } }),
    },
    {
      signature: 'eicar_test_file',
      title: 'a dropped file holds the EICAR string',
      scenario: () => ({ files: { 'files/x.com': `prefix ${EICAR}` }, report: (paths) => ({ dropped: [dropped('x.com', join(paths.files, 'x.com'), '/tmp/x.com')] }) }),
    },
    {
      signature: 'eicar_test_file',
      title: 'a sample without it',
      matches: false,
      scenario: () => ({ files: { binary: 'EICAR-STANDARD but not the test file' } }),
    },
  ]);
});

describe('discovery signatures', () => {
  signatureCases([
    { signature: 'system_info_discovery', title: 'uname -a', scenario: () => ({ events: new EventLog().exec(950, '/bin/uname', ['uname', '-a']) }) },
    { signature: 'user_discovery', title: 'id and whoami', scenario: () => ({ events: new EventLog().exec(951, '/usr/bin/id', ['id']).exec(952, '/usr/bin/whoami', ['whoami']) }) },
    { signature: 'process_discovery', title: 'ps aux', scenario: () => ({ events: new EventLog().exec(953, '/bin/ps', ['ps', 'aux']) }) },
    {
      signature: 'network_discovery',
      title: 'ip addr and /proc/net/tcp',
      scenario: () => ({ events: new EventLog().exec(954, '/sbin/ip', ['ip', 'addr']).read(955, '/proc/net/tcp') }),
    },
  ]);
});
