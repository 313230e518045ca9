import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fleetOf, machineFits, machineMatcher, runsUnderWine, wishOf } from '../../src/scheduler/matching.js';

const linux = { name: 'linux1', kind: 'linux', platform: 'linux', tags: '["x64"]' };
const qemuLinux = { name: 'deb1', kind: 'qemu', platform: 'linux', tags: '["x64"]' };
const win7 = { name: 'win7', kind: 'qemu', platform: 'windows', tags: '[]' };
/** A remote Cuckoo node's machine: its kind is not known. */
const remoteLinux = { name: 'far1', platform: 'linux', tags: '[]' };

const wish = (platform: string, tags: string[] = [], machine = '') => wishOf({ machine, platform, tags: JSON.stringify(tags) });

describe('platform windows: Wine on the linux machines, unless the cluster has a Windows machine', () => {
  it('without a Windows machine, a linux-kind machine serves platform windows (and its tags still count)', () => {
    const fits = machineMatcher([linux, qemuLinux]);
    assert.equal(fits(linux, wish('windows')), true);
    assert.equal(fits(linux, wish('windows', ['x64'])), true);
    assert.equal(fits(linux, wish('windows', ['gpu'])), false);
    // A qemu guest of platform linux has no Wine; nor is a remote node's machine of unknown kind assumed to.
    assert.equal(fits(qemuLinux, wish('windows')), false);
    assert.equal(machineFits(remoteLinux, wish('windows'), fleetOf([remoteLinux])), false);
    // Other platforms are not stretched.
    assert.equal(fits(linux, wish('darwin')), false);
  });

  it('with an enabled Windows machine, platform windows goes to it alone; no platform still fits the linux machine', () => {
    const fits = machineMatcher([linux, win7]);
    assert.equal(fits(linux, wish('windows')), false);
    assert.equal(fits(win7, wish('windows')), true);
    assert.equal(fits(linux, wish('')), true);
    assert.equal(fits(win7, wish('')), true);
    assert.equal(fits(linux, wish('linux')), true);
    assert.equal(fits(win7, wish('linux')), false);
  });

  it('a task naming a machine runs there whatever its platform says', () => {
    assert.equal(machineMatcher([linux, win7])(linux, wish('windows', [], 'linux1')), true);
    assert.equal(machineMatcher([linux])(win7, wish('', [], 'linux1')), false);
  });

  it('a task runs under Wine when it asks for platform windows, names no machine, and no Windows machine exists', () => {
    assert.equal(runsUnderWine(wish('windows', ['x64']), fleetOf([linux])), true);
    assert.equal(runsUnderWine(wish('windows'), fleetOf([linux, win7])), false);
    assert.equal(runsUnderWine(wish('windows', [], 'linux1'), fleetOf([linux])), false);
    assert.equal(runsUnderWine(wish(''), fleetOf([linux])), false);
  });
});
