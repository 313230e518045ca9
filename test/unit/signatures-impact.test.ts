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

describe('impact signatures', () => {
  signatureCases([
    {
      signature: 'ransomware_file_renames',
      title: 'twelve documents renamed to .locked',
      scenario: () => ({ events: encryptInPlace(12, () => 'locked') }),
    },
    {
      signature: 'ransomware_file_renames',
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
      signature: 'ransomware_file_renames',
      title: 'three files renamed to .locked',
      matches: false,
      scenario: () => ({ events: encryptInPlace(3, () => 'locked') }),
    },
    {
      signature: 'ransomware_file_renames',
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
