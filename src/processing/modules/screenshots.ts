import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ProcessingModule } from '../types.js';

/** Screenshots shots/NNNN.jpg|png in order; thumbnails (NNNN_small.jpg) are left out, as in Cuckoo. OCR is not done. */
export const screenshotsModule: ProcessingModule<'screenshots'> = {
  key: 'screenshots',
  async run(input) {
    const names = await readdir(input.paths.shots).catch(() => [] as string[]);
    const shots = names.filter((name) => /^\d+\.(jpe?g|png)$/i.test(name)).sort((a, b) => Number.parseInt(a, 10) - Number.parseInt(b, 10));
    return shots.length > 0 ? shots.map((name) => ({ path: join(input.paths.shots, name), ocr: '' })) : undefined;
  },
};
