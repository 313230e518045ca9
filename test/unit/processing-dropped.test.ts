import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { collectDroppedFiles } from '../../src/machinery/linux/dropped-files.js';
import { droppedModule } from '../../src/processing/modules/dropped.js';
import type { ProcessingInput } from '../../src/processing/types.js';
import { YaraScanner } from '../../src/processing/yara.js';
import { dropped } from '../../src/reporting/html-files.js';
import { FileTypeDetector } from '../../src/storage/filetype.js';
import { AnalysisPaths } from '../../src/storage/layout.js';

/**
 * From the machine's disk to the report: the linux collector writes files/ and files.json under small
 * limits, and the dropped processing module and the HTML report say which entries are truncated.
 */
describe('dropped files in the report', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nestbox-dropped-report-'));
  const fileType = new FileTypeDetector();
  const yara = new YaraScanner([], dir);
  after(async () => {
    fileType.close();
    await yara.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('describes the stored bytes of a truncated file, with its real size and a note, and leaves out a file without content', async () => {
    const upper = join(dir, 'upper');
    mkdirSync(join(upper, 'tmp'), { recursive: true });
    writeFileSync(join(upper, 'tmp/small.txt'), 'a small note\n');
    writeFileSync(join(upper, 'tmp/big.bin'), randomBytes(3000));
    writeFileSync(join(upper, 'tmp/bigger.bin'), randomBytes(4000));
    const paths = new AnalysisPaths(join(dir, 'analysis'));
    paths.create();
    // Room for the small file and 1024 bytes of /tmp/big.bin: none for /tmp/bigger.bin.
    const limits = { max_file_size: 1024, max_total_size: 13 + 1024, max_files: 10 };
    const { entries } = await collectDroppedFiles({ upper, filesDir: paths.files, baseline: new Map(), exclude: new Set(), limits });
    writeFileSync(paths.filesJson, entries.map((entry) => `${JSON.stringify(entry)}\n`).join(''));

    const input = { paths, tools: { fileType, yara } } as unknown as ProcessingInput;
    const report = (await droppedModule.run(input))!;
    const byPath = new Map(report.map((file) => [file.filepath, file]));
    assert.deepEqual([...byPath.keys()].sort(), ['/tmp/big.bin', '/tmp/small.txt'], '/tmp/bigger.bin has no stored bytes');

    const small = byPath.get('/tmp/small.txt')!;
    assert.equal(small.size, 13);
    assert.equal('truncated' in small || 'original_size' in small || 'note' in small, false);

    const big = byPath.get('/tmp/big.bin')!;
    const keptHash = execFileSync('sh', ['-c', `head -c 1024 '${join(upper, 'tmp/big.bin')}' | sha256sum`], { encoding: 'utf8' }).split(' ')[0];
    assert.equal(big.size, 1024, 'size and hashes are of the stored bytes');
    assert.equal(big.sha256, keptHash);
    assert.equal(big.truncated, true);
    assert.equal(big.original_size, 3000);
    assert.match(big.note!, /^truncated: only the first 1024 of 3000 bytes were kept .*hashes are of those bytes only$/);

    assert.match(String(dropped(report)), /1\.0 KiB \(1024 bytes\) kept of 2\.9 KiB \(3000 bytes\) \(truncated; hashes of the kept bytes\)/);
  });
});
