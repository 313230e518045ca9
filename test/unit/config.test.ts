import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { applyEnvOverrides, loadConfig, validateConfig } from '../../src/config/load.js';
import { configSchema } from '../../src/config/schema.js';
import { configTemplate } from '../../src/config/template.js';
import { isNestboxError } from '../../src/errors.js';

describe('configuration', () => {
  const homes: string[] = [];
  const newHome = () => {
    const home = mkdtempSync(join(tmpdir(), 'nestbox-config-'));
    homes.push(home);
    return home;
  };
  afterEach(() => {
    for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
  });

  it('documents exactly the defaults in the file written on first start', () => {
    const written = configSchema.parse(parseYaml(configTemplate('TOKEN')));
    const defaults = configSchema.parse({});
    assert.deepEqual({ ...written, api: { ...written.api, token: '' } }, defaults);
    assert.equal(written.api.token, 'TOKEN');
  });

  it('creates the file once, private, with a fresh random token, and keeps it afterwards', () => {
    const home = newHome();
    const first = loadConfig(home, {});
    assert.match(first.createdToken ?? '', /^[A-Za-z0-9_-]{22}$/);
    assert.equal(first.config.api.token, first.createdToken);
    assert.equal(statSync(first.file).mode & 0o777, 0o600);
    const second = loadConfig(home, {});
    assert.equal(second.createdToken, undefined);
    assert.equal(second.config.api.token, first.createdToken);
    assert.notEqual(loadConfig(newHome(), {}).config.api.token, first.config.api.token);
  });

  it('resolves storage paths under the home and applies NESTBOX_* overrides', () => {
    const home = newHome();
    const { config } = loadConfig(home, {
      NESTBOX_API_PORT: '9100',
      NESTBOX_API_TOKEN: '',
      NESTBOX_API_DEBUG: 'yes',
      NESTBOX_PATHS_TMPPATH: '/var/tmp/nb',
      NESTBOX_MACHINES: '[{"name":"a","tags":["x"]},{"name":"b"}]',
    });
    assert.equal(config.api.port, 9100);
    assert.equal(config.api.token, '');
    assert.equal(config.api.debug, true);
    assert.equal(config.paths.storage, join(home, 'storage'));
    assert.equal(config.paths.tmppath, '/var/tmp/nb');
    assert.deepEqual(config.machines.map((m) => [m.name, m.kind, m.tags]), [['a', 'linux', ['x']], ['b', 'linux', []]]);
  });

  it('says which key is wrong', () => {
    const home = newHome();
    writeFileSync(join(home, 'config.yaml'), 'api:\n  port: "eighty"\n');
    assert.throws(() => loadConfig(home, {}), (error) => isNestboxError(error, 'invalid_config') && /api\.port/.test(error.message));
    assert.throws(() => applyEnvOverrides({}, { NESTBOX_API_PORT: 'x' }), /NESTBOX_API_PORT/);
    assert.throws(() => validateConfig({ machines: [{ name: 'bad name' }] }), /machines\.0\.name/);
    writeFileSync(join(home, 'config.yaml'), '- a list\n');
    assert.throws(() => loadConfig(home, {}), /mapping/);
  });

  it('refuses a bad machine setting at load, naming the machine and the field', () => {
    const home = newHome();
    const bad = [
      { yaml: 'machines:\n  - name: sandbox1\n    settings:\n      memory_mb: 8\n', where: 'machines.0.settings.memory_mb (machine sandbox1)' },
      { yaml: 'machines:\n  - name: linux1\n  - name: win7\n    kind: qemu\n    settings:\n      accel: hvf\n', where: 'machines.1.settings.accel (machine win7)' },
      { yaml: 'machines:\n  - name: slow\n    settings:\n      screenshot_interval: "often"\n', where: 'machines.0.settings.screenshot_interval (machine slow)' },
      { yaml: 'machines:\n  - name: own\n    kind: qemu\n    settings:\n      disk: /images/own.qcow2\n', where: 'machines.0.settings.state (machine own)' },
    ];
    for (const { yaml, where } of bad) {
      writeFileSync(join(home, 'config.yaml'), yaml);
      assert.throws(
        () => loadConfig(home, {}),
        (error) => isNestboxError(error, 'invalid_config') && error.message.includes(`${where}: `),
        where,
      );
    }
    assert.throws(
      () => loadConfig(home, { NESTBOX_MACHINES: '[{"name":"q","kind":"qemu","settings":{"cpus":64}}]' }),
      /machines\.0\.settings\.cpus \(machine q\): /,
      'a machine from the environment is checked the same way',
    );
  });

  it('keeps good machine settings as written, defaults left to the machine kind', () => {
    const home = newHome();
    writeFileSync(join(home, 'config.yaml'), 'machines:\n  - name: big\n    settings:\n      memory_mb: 2048\n  - name: q\n    kind: qemu\n    settings:\n      accel: tcg\n');
    const { config } = loadConfig(home, {});
    assert.deepEqual(config.machines.map((m) => [m.name, m.kind, m.settings]), [
      ['big', 'linux', { memory_mb: 2048 }],
      ['q', 'qemu', { accel: 'tcg' }],
    ]);
  });

  it('refuses a misspelt key instead of silently using the default', () => {
    const home = newHome();
    const typos = [
      { yaml: 'api:\n  prot: 9000\n', where: 'api', misspelt: 'prot' },
      { yaml: 'tasks:\n  default_timout: 30\n', where: 'tasks', misspelt: 'default_timout' },
      { yaml: 'machine:\n  - name: a\n', where: '(root)', misspelt: 'machine' },
      { yaml: 'machines:\n  - name: a\n    platfrom: windows\n', where: 'machines.0 (machine a)', misspelt: 'platfrom' },
      { yaml: 'machines:\n  - name: b\n    settings:\n      memroy_mb: 2048\n', where: 'machines.0.settings (machine b)', misspelt: 'memroy_mb' },
    ];
    for (const { yaml, where, misspelt } of typos) {
      writeFileSync(join(home, 'config.yaml'), yaml);
      assert.throws(
        () => loadConfig(home, {}),
        (error) => isNestboxError(error, 'invalid_config') && error.message.includes(`${where}: `) && error.message.includes(misspelt),
        where,
      );
    }
  });

  it('keeps an unreadable file from starting the service instead of replacing it', () => {
    const home = newHome();
    writeFileSync(join(home, 'config.yaml'), 'api: [unclosed\n');
    assert.throws(() => loadConfig(home, {}), (error) => isNestboxError(error, 'invalid_config'));
    assert.equal(readFileSync(join(home, 'config.yaml'), 'utf8'), 'api: [unclosed\n');
  });
});
