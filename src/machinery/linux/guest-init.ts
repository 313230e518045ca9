/** Where the init appears inside the machine: bound over an empty file of the guest root, as pid 1. */
export const GUEST_INIT_PATH = '/sbin/init';
/** The same file without links on the way (/sbin is a link to usr/sbin): where the host checks it. */
export const GUEST_INIT_REAL_PATH = '/usr/sbin/init';
