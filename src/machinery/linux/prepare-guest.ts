import { pino } from 'pino';
import { ensureGuestInit } from './guest-init.js';
import { ensureGuestRoot } from './guest-root.js';
import { parseLinuxSettings } from './settings.js';

/**
 * Builds the default guest root and machine init ahead of first use (setup, CI, tests):
 *   node dist/src/machinery/linux/prepare-guest.js
 * Does nothing when both are already there.
 */
const settings = parseLinuxSettings({}, 'default');
const log = pino({ level: 'info' });
const root = await ensureGuestRoot(settings, log);
const init = await ensureGuestInit(settings.guest_root_dir);
log.info({ root, init }, 'guest root and init ready');
