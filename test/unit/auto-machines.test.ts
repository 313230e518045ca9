import assert from 'node:assert/strict';
import { availableParallelism, totalmem } from 'node:os';
import { describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { autoMachineCount, hostResources } from '../../src/config/auto-machines.js';
import { applyEnvOverrides, validateConfig } from '../../src/config/load.js';
import { configSchema } from '../../src/config/schema.js';
import { configTemplate } from '../../src/config/template.js';

const DEFAULTS = configSchema.parse({}).machines_auto;

describe('default machines sized from the host', () => {
  it('takes one machine per core while memory lasts, at least one and at most max', () => {
    const cases = [
      { cores: 2, memoryMb: 24_000, expected: 2, why: 'cores bound it' },
      { cores: 16, memoryMb: 4096, expected: 3, why: 'memory bounds it: (4096 - 1024) / 1024' },
      { cores: 64, memoryMb: 512_000, expected: 8, why: 'max bounds it' },
      { cores: 1, memoryMb: 512, expected: 1, why: 'a small host still gets one' },
      { cores: 4, memoryMb: 2047, expected: 1, why: 'not enough for a second: (2047 - 1024) / 1024 < 2' },
      { cores: 4, memoryMb: 3072, expected: 2, why: 'exactly two budgets after the reserve' },
    ];
    for (const { cores, memoryMb, expected, why } of cases) {
      assert.equal(autoMachineCount({ cores, memoryMb }, DEFAULTS), expected, why);
    }
    assert.equal(autoMachineCount({ cores: 8, memoryMb: 16_384 }, { ...DEFAULTS, machine_mb: 4096, reserve_mb: 0 }), 4, 'budgets are settings');
    assert.equal(autoMachineCount({ cores: 1, memoryMb: 512 }, { ...DEFAULTS, count: 5 }), 5, 'an explicit count wins over the host');
  });

  it('reads cores and memory of this host, never more than the host has', () => {
    const host = hostResources();
    assert.ok(host.cores >= 1 && host.cores <= availableParallelism(), JSON.stringify(host));
    assert.ok(host.memoryMb > 0 && host.memoryMb <= totalmem() / 1024 ** 2, JSON.stringify(host));
  });

  it('configures as many linux machines as the rule gives, each with its own name and addresses', () => {
    const expected = autoMachineCount(hostResources(), DEFAULTS);
    const machines = validateConfig({}).machines;
    assert.equal(machines.length, expected);
    assert.deepEqual(machines.map((m) => m.name), Array.from({ length: expected }, (_, i) => `linux${i + 1}`));
    assert.ok(machines.every((m) => m.kind === 'linux' && m.platform === 'linux'));
    assert.deepEqual([machines[0]!.ip, machines[0]!.resultserver_ip], ['10.200.0.2', '10.200.0.1'], 'the first keeps the addresses of before');
    const addresses = machines.flatMap((m) => [m.ip, m.resultserver_ip]);
    assert.equal(new Set(addresses).size, addresses.length, 'no two machines share an address');
  });

  it('makes a written count, a count from the environment, or a machines list win', () => {
    const counted = validateConfig({ machines_auto: { count: 5 } }).machines;
    assert.deepEqual(counted.map((m) => [m.name, m.ip, m.resultserver_ip]), [
      ['linux1', '10.200.0.2', '10.200.0.1'],
      ['linux2', '10.200.0.6', '10.200.0.5'],
      ['linux3', '10.200.0.10', '10.200.0.9'],
      ['linux4', '10.200.0.14', '10.200.0.13'],
      ['linux5', '10.200.0.18', '10.200.0.17'],
    ]);
    assert.equal(validateConfig(applyEnvOverrides({}, { NESTBOX_MACHINES_AUTO_COUNT: '3' })).machines.length, 3);
    const listed = validateConfig({ machines: [{ name: 'only' }], machines_auto: { count: 5 } }).machines;
    assert.deepEqual(listed.map((m) => m.name), ['only'], 'a list replaces the automatic machines');
    assert.deepEqual(validateConfig({ machines: [] }).machines, [], 'an empty list means no machine (an API-only node)');
    assert.throws(() => validateConfig({ machines_auto: { count: -1 } }), /machines_auto\.count/);
  });

  it('leaves the machines to the automatic sizing in the file written on first start', () => {
    const written = parseYaml(configTemplate('TOKEN')) as Record<string, unknown>;
    assert.equal(written.machines, undefined, 'the template lists no machine, so a fresh install sizes them');
    assert.deepEqual(written.machines_auto, DEFAULTS);
  });
});
