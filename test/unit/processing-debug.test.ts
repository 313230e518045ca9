import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { debugModule } from '../../src/processing/modules/debug.js';
import type { ProcessingInput } from '../../src/processing/types.js';
import { readSupervisorRecord } from '../../src/report/supervisor-log.js';
import { AnalysisPaths } from '../../src/storage/layout.js';

/** The debug section: the sleeps the linux machine's supervisor ended early (logs/supervisor.jsonl). */
describe('debug section: skipped sleeps', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nestbox-debug-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  let tasks = 0;

  function inputWith(supervisorLog: string | undefined): ProcessingInput {
    const paths = new AnalysisPaths(join(dir, String(++tasks)));
    paths.create();
    if (supervisorLog !== undefined) writeFileSync(paths.supervisorLog, supervisorLog);
    return { paths, errors: [], supervisorRecord: () => readSupervisorRecord(paths.supervisorLog) } as unknown as ProcessingInput;
  }

  it('lists the sleep lines of the supervisor log and leaves out captures and malformed lines', async () => {
    const log = [
      '{"event":"sleep","pid":41,"call":"clock_nanosleep","seconds":90,"time":1800000000}',
      '{"event":"capture","reason":"exec","pid":41,"filepath":"/tmp/x","size":3,"sha256":"ab"}',
      '{"event":"sleep","pid":"41","call":"nanosleep","seconds":90,"time":1800000000}',
      'not json',
      '{"event":"sleep","pid":42,"call":"nanosleep","seconds":600.5,"time":1800000001}',
    ].join('\n');
    const section = (await debugModule.run(inputWith(`${log}\n`)))!;
    assert.deepEqual(section.skipped_sleeps, [
      { pid: 41, call: 'clock_nanosleep', seconds: 90, time: 1800000000 },
      { pid: 42, call: 'nanosleep', seconds: 600.5, time: 1800000001 },
    ]);
  });

  it('has no skipped_sleeps key when no sleep was skipped', async () => {
    assert.equal('skipped_sleeps' in (await debugModule.run(inputWith(undefined)))!, false);
    assert.equal('skipped_sleeps' in (await debugModule.run(inputWith('{"event":"capture"}\n')))!, false);
  });
});
