import type { Call } from './report-types.js';

/**
 * Every category a call of the report may have: the Linux monitor's, then Cuckoo's Windows categories of
 * the calls a Windows program made under Wine. The calls filter of the analysis page offers these.
 */
export const CALL_CATEGORIES = [
  'process', 'file', 'network', 'memory', 'synchronisation', 'system',
  'filesystem', 'registry', 'threading', 'services', 'hooking', 'misc', 'crypto', 'ui', 'device', 'browser',
  'certificate', 'resource', 'com', 'exception', 'netapi',
] as const satisfies ReadonlyArray<Call['category']>;
