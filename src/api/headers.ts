/** Headers every answer of the API carries, the unrouted ones too (unrouted.ts). */
export const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'cache-control': 'no-cache',
  pragma: 'no-cache',
  expires: '0',
};
