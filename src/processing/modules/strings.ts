import { existsSync } from 'node:fs';
import { scanFile, StringCollector, StringScanner } from '../strings.js';
import type { ProcessingModule } from '../types.js';

/** Cuckoo reads at most this much of a sample for its strings. */
const MAX_READ = 16 << 20;

/** Printable ASCII then UTF-16LE strings of the sample (file tasks), capped like Cuckoo's. */
export const stringsModule: ProcessingModule<'strings'> = {
  key: 'strings',
  async run(input) {
    if (input.binaryPath === undefined || !existsSync(input.binaryPath)) return undefined;
    const collector = new StringCollector();
    await scanFile(input.binaryPath, new StringScanner(collector.sink), MAX_READ);
    const strings = collector.result();
    return strings.length > 0 ? strings : undefined;
  },
};
