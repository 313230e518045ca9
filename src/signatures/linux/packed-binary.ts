import { headOf } from '../helpers/file-search.js';
import { rulesFeeding, sampleRuleMatches } from '../static-rule-signature.js';
import { Signature, type SignatureContext, type SignatureInfo } from '../signature.js';

const UPX_MAGIC = Buffer.from('UPX!');

/**
 * The sample's code is packed: packers named by static analysis (`static.packer.names`, PEiD-style
 * `peid_signatures`), executable sections or segments whose entropy only compression or encryption gives
 * (`static.packer.high_entropy_sections`), YARA rules whose `signature` meta names this signature
 * (rules/yara/packers.yar, or an operator's), or UPX's marks in the file itself when static analysis is absent.
 */
export class PackedBinary extends Signature<never> {
  readonly info: SignatureInfo = {
    name: 'packed_binary',
    description: 'The sample is packed or encrypted to hide its code from static analysis',
    severity: 2,
    categories: ['packer'],
    ttp: ['T1027.002'],
  };

  override async onComplete(ctx: SignatureContext): Promise<void> {
    const { report } = ctx;
    const packer = asRecord(report.static?.packer);
    for (const name of new Set([...strings(packer.names), ...strings(report.static?.peid_signatures)])) {
      this.markIoc('packer', name, 'packer identified by static analysis');
    }
    for (const rule of rulesFeeding(sampleRuleMatches(report), this.info.name)) this.markIoc('yara', rule.name, rule.meta.description ?? null);
    for (const section of strings(packer.high_entropy_sections)) this.markIoc('section', section, 'executable code with the entropy of compressed or encrypted data');
    for (const text of report.strings ?? []) {
      if (/packed with the UPX|\$Id: UPX/.test(text)) this.markIoc('string', text.slice(0, 200), 'UPX banner');
    }
    const head = report.target.category !== 'url' ? await headOf(report.target.file?.path ?? ctx.paths.binary, 4096) : null;
    if (head?.includes(UPX_MAGIC)) this.markIoc('header', 'UPX!', 'UPX header in the first 4 KiB');
  }
}

function asRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}
