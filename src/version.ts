/** The version nestbox reports in /cuckoo/status, and the API protocol it speaks. */
export const NESTBOX_VERSION = '2.0.7';
export const NESTBOX_RELEASE = '0.1.0';
export const PROTOCOL_VERSION = 1;
