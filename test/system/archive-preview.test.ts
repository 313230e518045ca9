import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileType } from '../../src/machinery/host/file-type.js';
import { PACKAGES_WITHOUT_WINE } from '../../src/analysis/packages/index.js';
import { previewArchivePick } from '../../src/machinery/host/archive-preview.js';
import { windowsSample } from '../helpers/windows-samples.js';

/**
 * The look into an archive on the host, before its machine is made (the machine gets Wine's layer when
 * the file it will run is a Windows program): it picks what the machine's archive package will pick.
 */
describe('which file of an archive the linux machine will run, seen on the host', () => {
  let dir: string;
  const limits = { passwords: [], maxDepth: 1, maxTotalSize: 50 * 2 ** 20, maxFiles: 100 };
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'nestbox-preview-'));
    mkdirSync(join(dir, 'tree', 'bin'), { recursive: true });
    writeFileSync(join(dir, 'tree', 'a-readme.txt'), 'read me\n');
    writeFileSync(join(dir, 'tree', 'run.sh'), '#!/bin/sh\necho run\n');
    copyFileSync(windowsSample('mutex', 32), join(dir, 'tree', 'bin', 'mutex.exe'));
    execFileSync('7z', ['a', '-tzip', '-pinfected', join(dir, 'locked.zip'), '.'], { cwd: join(dir, 'tree'), stdio: 'ignore' });
    execFileSync('7z', ['a', '-tzip', join(dir, 'open.zip'), 'bin', 'a-readme.txt'], { cwd: join(dir, 'tree'), stdio: 'ignore' });
    execFileSync('tar', ['-czf', join(dir, 'tree.tar.gz'), '-C', join(dir, 'tree'), 'bin', 'run.sh']);
    writeFileSync(join(dir, 'broken.zip'), Buffer.concat([Buffer.from('PK\x03\x04'), Buffer.alloc(200, 7)]));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const preview = async (name: string, options: { wanted?: string; passwords?: string[]; withoutWine?: boolean } = {}) => {
    const path = join(dir, name);
    const picked = await previewArchivePick({ path, fileType: await fileType(path), passwords: options.passwords ?? [''], limits, workDir: dir, ...(options.wanted ? { wanted: options.wanted } : {}), ...(options.withoutWine ? { offered: PACKAGES_WITHOUT_WINE } : {}) });
    return picked && [picked.name, picked.package.name];
  };

  it('picks the first file a package runs, with its path as the machine unpacks it, tar inside gzip included', async () => {
    assert.deepEqual(await preview('open.zip'), ['bin/mutex.exe', 'wine']);
    assert.deepEqual(await preview('tree.tar.gz'), ['bin/mutex.exe', 'wine']);
  });

  it('follows the file option, and the passwords the machine will try', async () => {
    assert.deepEqual(await preview('tree.tar.gz', { wanted: 'run.sh' }), ['run.sh', 'bash']);
    assert.deepEqual(await preview('locked.zip', { passwords: ['', 'infected'] }), ['bin/mutex.exe', 'wine']);
  });

  it('picks as a machine without Wine (a qemu Linux guest) would: a Windows program only as the last resort or when named', async () => {
    assert.deepEqual(await preview('tree.tar.gz', { withoutWine: true }), ['run.sh', 'bash']);
    assert.deepEqual(await preview('open.zip', { withoutWine: true }), ['a-readme.txt', 'elf']);
    assert.deepEqual(await preview('open.zip', { withoutWine: true, wanted: 'mutex.exe' }), ['bin/mutex.exe', 'elf']);
  });

  it('cannot tell for an archive it cannot open: the machine then unpacks it as always', async () => {
    assert.equal(await preview('locked.zip', { passwords: ['wrong'] }), undefined);
    assert.equal(await preview('broken.zip'), undefined);
  });
});
