import { z } from 'zod';
import { NestboxError } from '../../errors.js';

/**
 * The `settings` of a machine of kind `qemu` (config `machines[].settings`). Every key has a default,
 * so `settings: {}` is a working machine that runs nestbox's own Debian guest image, built on first use.
 *
 * An operator's own image instead: `disk` (any disk QEMU boots, with a guest that runs an agent speaking
 * Cuckoo 2.0's protocol on port 8000 of 10.0.2.15, which QEMU's DHCP gives it) and `state`, the memory
 * state `nestbox image snapshot` saved from it (made on first use when missing).
 */
export const qemuSettingsSchema = z.strictObject({
  /** Where images are built and their ready states kept; outside the clone. */
  image_dir: z.string().default('/var/lib/nestbox/images'),
  /** Per-task state: QMP and result sockets, serial log, the task's disk overlay. */
  run_dir: z.string().default('/run/nestbox/qemu'),
  /** Debian release and mirror of the built image. */
  suite: z.string().default('bookworm'),
  mirror: z.string().default('http://deb.debian.org/debian'),
  /** Debian packages the built image has beyond its own (strace, for the analyzer's fallback tracer; tools samples expect). */
  extra_packages: z.array(z.string().regex(/^[a-z0-9][a-z0-9+.-]+$/)).default([]),
  memory_mb: z.number().int().min(128).default(512),
  cpus: z.number().int().min(1).max(16).default(1),
  /** auto: KVM when a short boot test shows it works on this host, else TCG (software emulation). */
  accel: z.enum(['auto', 'kvm', 'tcg']).default('auto'),
  /**
   * nestbox: an analyzer runs the sample: on a machine of platform `linux`, nestbox's Linux analyzer
   * (behaviour trace, dropped files, process dumps; the guest needs Python 3, and nestbox's monitor or
   * strace); on a machine of platform `windows`, Cuckoo 2.0.7's Windows analyzer and monitor from
   * `cuckoo_cwd`, driven as Cuckoo drives them (windows-guest.ts). none: the sample is only stored and
   * started through the agent: screenshots, capture and full memory dump, no behaviour log.
   */
  analyzer: z.enum(['nestbox', 'none']).default('nestbox'),
  /**
   * Machines of platform `windows`: the operator's Cuckoo 2.0.7 working directory (its analyzer/windows,
   * monitor/ and stuff/dumpmem.yarac are sent to the guest for each task; nestbox ships no Windows analyzer).
   */
  cuckoo_cwd: z.string().default(''),
  /** Which monitor of cuckoo_cwd/monitor/ (`latest`: the one Cuckoo's own `latest` file names). */
  cuckoo_monitor: z.string().regex(/^[A-Za-z0-9_.-]+$/).default('latest'),
  /** Record the behaviour in the guest (nestbox's analyzer only): with nestbox's monitor, else strace if the image has it. */
  tracing: z.boolean().default(true),
  /**
   * A sleep of the sample longer than this many seconds returns at once, and is recorded, as on a linux
   * machine: the guest's analyzer runs the sample under nestbox's supervisor (guest/analyzer/supervision.py).
   */
  sleep_skip_threshold: z.number().min(0).default(10),
  screenshots: z.boolean().default(true),
  /** Seconds between two looks at the screen. */
  screenshot_interval: z.number().positive().default(1),
  /** Seconds the analyzer gets past the timeout to dump memory and upload files before the guest is stopped. */
  collect_grace: z.number().int().min(1).default(30),
  /** Seconds a cold boot may take before the guest's agent answers (building the ready state, a reboot task's boot). */
  boot_timeout: z.number().int().positive().default(300),
  /**
   * The disk overlay a task leaves (the guest's end state) is kept for reboot tasks up to this size;
   * 0 keeps none.
   */
  reboot_state_mb: z.number().int().min(0).default(64),
  /** Bytes of the guest's output kept in analysis.log. */
  log_limit_bytes: z.number().int().min(1024).default(1024 * 1024),
  /**
   * Caps on the process dumps the guest may send; the total also caps the behaviour trace. Dropped files
   * have their own limits, the configuration's `dropped_files`, the same for every machine kind.
   */
  max_uploads: z.number().int().min(0).default(200),
  max_upload_mb: z.number().int().min(1).default(256),
  max_total_upload_mb: z.number().int().min(1).default(1024),
  /** An operator's own image (see above); empty = nestbox's built Debian image. */
  disk: z.string().default(''),
  state: z.string().default(''),
  /** Hardware of an operator's image: e1000 and ide suit guests without virtio drivers (Windows). */
  nic_model: z.enum(['virtio-net-pci', 'e1000']).default('virtio-net-pci'),
  disk_bus: z.enum(['virtio', 'ide']).default('virtio'),
}).refine((settings) => Boolean(settings.disk) === Boolean(settings.state), { message: 'settings "disk" and "state" go together', path: ['state'] });

export type QemuSettings = z.infer<typeof qemuSettingsSchema>;

export function parseQemuSettings(settings: unknown, machine: string): QemuSettings {
  const parsed = qemuSettingsSchema.safeParse(settings ?? {});
  if (parsed.success) return parsed.data;
  throw new NestboxError('invalid_config', `machine ${machine}: invalid settings: ${z.prettifyError(parsed.error)}`, {
    context: { machine },
  });
}
