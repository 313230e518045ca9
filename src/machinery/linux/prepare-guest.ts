import { pino } from 'pino';
import { ensureGuestRoot } from './guest-root.js';
import { ensureNativeProgram, MACHINE_INIT, USERNS_EXEC } from '../host/native-programs.js';
import { parseLinuxSettings } from './settings.js';
import { ensureWineLayer } from './wine-layer.js';

/**
 * Builds the default guest root, machine init and user namespace launcher ahead of first use (setup, CI, tests):
 *   node dist/src/machinery/linux/prepare-guest.js [--wine]
 * With --wine, also the Wine layer Windows samples run on. Does nothing when they are already there.
 */
const settings = parseLinuxSettings({}, 'default');
const log = pino({ level: 'info' });
const root = await ensureGuestRoot(settings, log);
const init = await ensureNativeProgram(MACHINE_INIT, settings.guest_root_dir);
const launcher = await ensureNativeProgram(USERNS_EXEC, settings.guest_root_dir);
const wine = process.argv.includes('--wine') ? await ensureWineLayer(root, settings, log) : undefined;
log.info({ root, init, launcher, wine }, 'guest root, init and launcher ready');
