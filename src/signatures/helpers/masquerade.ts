import { basename } from './paths.js';

/** Names of kernel threads, which user-space malware borrows because `ps` shows them everywhere. */
const KERNEL_THREAD = /^\[.*\]$|^(kworker|kthreadd|ksoftirqd|kswapd|migration\/|rcu_|kblockd|khugepaged|kauditd|kdevtmpfs|jbd2\/|writeback|kintegrityd|ksmd|oom_reaper|cpuhp\/|kcompactd|watchdogd|irq\/|scsi_eh|kthrotld|kpsmoused|kstrp|zswap)/;

/** Daemons and shells every Linux system runs. */
const SYSTEM_PROGRAM = /^(sshd|systemd(-[a-z]+)?|init|cron|crond|atd|rsyslogd|syslogd|dbus-daemon|udevd|agetty|getty|httpd|nginx|apache2|mysqld|postgres|dhclient|networkmanager|polkitd|snapd|containerd|dockerd|bash|sh|login|sudo|su|upstart|acpid|irqbalance|auditd|lvmetad|kthreadd)$/i;

/** Whether a process name looks like a kernel thread or a standard system program. */
export function isSystemLookingName(name: string): boolean {
  const bare = name.replace(/^-/, '').trim();
  return KERNEL_THREAD.test(bare) || SYSTEM_PROGRAM.test(basename(bare));
}

/**
 * Whether a name claims to be something the image is not: a system-looking name on a program whose own file
 * name differs (comm is cut at 15 characters, so a prefix of the file name is the same program).
 */
export function isMasquerade(name: string, imagePath: string): boolean {
  const image = basename(imagePath);
  const bare = basename(name.replace(/^-/, '').trim());
  if (image !== '' && (image === bare || image.startsWith(bare) || bare.startsWith(image))) return false;
  return isSystemLookingName(name);
}
