import { existsSync } from 'node:fs';
import type { ProcessingModule } from '../types.js';

/**
 * YARA matches of the sample, at the top level of the report. The same matches appear in
 * target.file.yara; dropped files and memory dumps carry theirs in their own entries.
 */
export const yaraModule: ProcessingModule<'yara'> = {
  key: 'yara',
  async run(input) {
    if (input.binaryPath === undefined || !existsSync(input.binaryPath)) return undefined;
    const matches = await input.tools.yara.scan(input.binaryPath);
    return matches.length > 0 ? matches : undefined;
  },
};
