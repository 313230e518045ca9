import { z } from 'zod';
import { NestboxError } from '../../errors.js';

/**
 * The `settings` of a machine of kind `linux` (config `machines[].settings`). Every key has a default,
 * so `settings: {}` is a working machine.
 */
export const linuxSettingsSchema = z.strictObject({
  /** Where guest roots are built and cached, one folder per version hash; outside the clone. */
  guest_root_dir: z.string().default('/var/lib/nestbox/guest-root'),
  /** Debian mirror debootstrap and apt use to build the guest root. */
  mirror: z.string().default('http://deb.debian.org/debian'),
  /** Install chromium in the guest root for URL tasks (about 130 MiB more to download). */
  browser: z.boolean().default(true),
  /**
   * First host uid and gid of the machine's ids: root inside the machine is this host id, and ids 0 to
   * 65535 inside are this one to this + 65535 on the host. The default 1879048192 (0x70000000) lies above
   * the ranges useradd (/etc/subuid) and systemd-nspawn hand out, and below 2^31, where some tools read
   * ids as negative. The range must belong to no host user, group or subordinate range: start-up checks.
   * The guest root is built with its files owned in this range, so changing it builds another.
   */
  host_id_base: z.number().int().min(65536).max(2 ** 32 - 65536 - 1).multipleOf(65536).default(0x70000000),
  /** Per-task state: mount points of the writable layer, seccomp program, owner records. */
  run_dir: z.string().default('/run/nestbox/machines'),
  /** Memory limit of the whole machine (sample, display, page cache of its files). */
  memory_mb: z.number().int().min(64).default(1024),
  /** Size limit of the writable layer (what the sample may write in total). */
  disk_mb: z.number().int().min(16).default(512),
  /** Largest number of processes and threads in the machine. */
  pids_max: z.number().int().min(16).default(512),
  /** CPU limit in percent of one core. */
  cpu_percent: z.number().int().min(10).default(100),
  /** Record the behaviour with the tracer. */
  tracing: z.boolean().default(true),
  /**
   * Which tracer records it: `auto` uses eBPF where it works and strace otherwise; `strace` always uses
   * the strace fallback (which the sample can detect), for hosts where eBPF misbehaves and for tests.
   */
  tracer: z.enum(['auto', 'strace']).default('auto'),
  /** Run a virtual display and take screenshots when the screen changes. */
  screenshots: z.boolean().default(true),
  /** Seconds between two looks at the screen. */
  screenshot_interval: z.number().positive().default(1),
  /** The end state kept for reboot tasks is dropped when it is larger than this. */
  reboot_state_mb: z.number().int().min(0).default(64),
  /**
   * A sleep of the sample longer than this many seconds (nanosleep, clock_nanosleep) returns at once; a
   * timer whose first expiry is further (alarm, setitimer, timer_settime, timerfd_settime) fires within a
   * second; a wait with a longer timeout (select, poll, epoll_wait and their variants) ends at once with
   * nothing to wait on, else when a descriptor is ready or at this threshold. Each is recorded: a sample
   * cannot outwait the analysis. Shorter ones run as asked.
   */
  sleep_skip_threshold: z.number().min(0).default(10),
  /** Bytes of the in-machine output kept in analysis.log. */
  log_limit_bytes: z.number().int().min(1024).default(1024 * 1024),
});

export type LinuxSettings = z.infer<typeof linuxSettingsSchema>;

export function parseLinuxSettings(settings: unknown, machine: string): LinuxSettings {
  const parsed = linuxSettingsSchema.safeParse(settings ?? {});
  if (parsed.success) return parsed.data;
  throw new NestboxError('invalid_config', `machine ${machine}: invalid settings: ${z.prettifyError(parsed.error)}`, {
    context: { machine },
  });
}
