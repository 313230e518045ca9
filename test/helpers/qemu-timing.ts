/**
 * Seconds a QEMU guest has after the task's timeout to dump memory and upload its results (the machine
 * setting collect_grace). Under TCG on two loaded cores the e2e dropper's dump and dropped files took
 * more than 5 s, which made tests with a 5 s grace fail now and then.
 */
export const COLLECT_GRACE_S = 20;
