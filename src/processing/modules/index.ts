import type { AnyProcessingModule } from '../types.js';
import { behaviorModule } from './behavior.js';
import { debugModule } from './debug.js';
import { droppedModule } from './dropped.js';
import { infoModule } from './info.js';
import { metadataModule } from './metadata.js';
import { networkModule } from './network.js';
import { procmemoryModule } from './procmemory.js';
import { screenshotsModule } from './screenshots.js';
import { staticModule } from './static.js';
import { stringsModule } from './strings.js';
import { targetModule } from './target.js';
import { yaraModule } from './yara.js';

/** Every processing module, in the order their sections appear in report.json. */
export const PROCESSING_MODULES: readonly AnyProcessingModule[] = [
  infoModule,
  targetModule,
  staticModule,
  stringsModule,
  yaraModule,
  behaviorModule,
  networkModule,
  droppedModule,
  screenshotsModule,
  procmemoryModule,
  debugModule,
  metadataModule,
];
