import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { configTemplate } from '../../src/config/template.js';
import { isNestboxError } from '../../src/errors.js';
import { parseQemuSettings, qemuSettingsSchema } from '../../src/machinery/qemu/settings.js';

describe('qemu machine settings', () => {
  it('are documented in the configuration template with their real defaults', () => {
    const template = configTemplate('token');
    const block = template.slice(template.indexOf('  # - name: qemu1'), template.indexOf('\nlogging:')).trimEnd().split('\n');
    const yaml = block.map((line) => line.slice('  # '.length)).join('\n');
    const [machine] = parseYaml(yaml) as [{ kind: string; settings: Record<string, unknown> }];
    assert.equal(machine.kind, 'qemu');
    assert.deepEqual(machine.settings, qemuSettingsSchema.parse({}));
  });

  it('refuse a disk without its state, and wrong values, as configuration errors naming the machine', () => {
    for (const settings of [{ disk: '/images/win7.qcow2' }, { accel: 'hvf' }, { memory_mb: 16 }, { nic_model: 'rtl8139' }]) {
      assert.throws(
        () => parseQemuSettings(settings, 'win7'),
        (error: unknown) => isNestboxError(error, 'invalid_config') && /machine win7/.test(error.message),
      );
    }
    assert.equal(parseQemuSettings({ disk: '/d.qcow2', state: '/d.state', analyzer: 'none' }, 'x').analyzer, 'none');
  });
});
