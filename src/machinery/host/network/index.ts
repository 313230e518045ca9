/**
 * The per-task network of the Linux machinery: a namespace for the machine behind a gateway namespace
 * of its own, with the task's route (the fake internet by default) and a full capture.
 */
export { createTaskNetwork, prepareTaskNetwork, type PreparedNetwork } from './task-network.js';
export { SpareNetwork } from './spare-network.js';
export { cleanupStaleNetworks, type CleanupReport } from './cleanup.js';
export { interfaceStates, type InterfaceState } from './interface-state.js';
export { FAKE_ADDRESS_BLOCK, fakeAddressFor, isFakeAddress } from './fake-services/fake-addresses.js';
