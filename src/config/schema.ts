import { z } from 'zod';
import { autoMachineCount, defaultMachines, hostResources } from './auto-machines.js';
import { checkKindSettings, MACHINE_KINDS } from './machine-settings.js';

/**
 * The whole configuration of a nestbox installation. Every key has a default, so an empty file is a
 * valid configuration; `config/template.ts` writes the documented file on first start.
 */

export const machineSchema = z.strictObject({
  /** Unique name; `/machines/view/<name>` and the task's `machine` field use it. */
  name: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'machine names may use letters, digits, _ . -'),
  /** Machinery kind that runs this machine. */
  kind: z.enum(MACHINE_KINDS).default('linux'),
  /** Hypervisor label; defaults to the name. */
  label: z.string().optional(),
  platform: z.string().default('linux'),
  tags: z.array(z.string()).default([]),
  ip: z.string().default('10.200.0.2'),
  interface: z.string().nullable().default(null),
  snapshot: z.string().nullable().default(null),
  resultserver_ip: z.string().default('10.200.0.1'),
  resultserver_port: z.number().int().min(0).max(65535).default(2042),
  options: z.array(z.string()).default([]),
  /** Kind-specific settings (guest root, image, memory size...), checked against the kind's schema but kept as written. */
  settings: z.record(z.string(), z.unknown()).default({}),
}).superRefine(checkKindSettings);

export const vpnSchema = z.strictObject({
  name: z.string().min(1),
  description: z.string().default(''),
  interface: z.string().min(1),
});

/** The sections of the file, as written: `machines` is absent when the file gives no list. */
export const configSectionsSchema = z.strictObject({
  api: z
    .strictObject({
      host: z.string().min(1).default('localhost'),
      port: z.number().int().min(0).max(65535).default(8090),
      /** Cuckoo's `api_token`: clients send `Authorization: Bearer <token>`. Empty disables authentication. */
      token: z.string().default(''),
      /** Debug mode enables `/exit`. */
      debug: z.boolean().default(false),
      /** Largest accepted upload in bytes, per file part. */
      upload_limit: z.number().int().positive().default(1024 ** 3 * 2),
      /** Largest body of one /tasks/create/* request in bytes: all its files and fields together. */
      request_limit: z.number().int().positive().default(1024 ** 3 * 4),
    })
    .prefault({}),
  paths: z
    .strictObject({
      /** Cuckoo-layout storage: analyses/<id>/ and binaries/<sha256>. Relative paths are under the home. */
      storage: z.string().default('storage'),
      /** Cuckoo's `tmppath`: submitted files are kept here until analysed. */
      tmppath: z.string().default('tmp'),
    })
    .prefault({}),
  database: z
    .strictObject({
      /** Empty: SQLite in <home>/nestbox.db. Otherwise `sqlite:///path` or `postgres://user:pw@host/db`. */
      connection: z.string().default(''),
    })
    .prefault({}),
  tasks: z
    .strictObject({
      /** Analysis timeout in seconds when a task gives none (Cuckoo's timeouts.default). */
      default_timeout: z.number().int().positive().default(120),
      /** Seconds added to the timeout before a machine is forcibly stopped (timeouts.critical). */
      critical_timeout: z.number().int().positive().default(60),
      default_priority: z.number().int().min(1).max(3).default(1),
      max_priority: z.number().int().min(1).default(3),
      /** Largest timeout a client may ask for, in seconds. */
      max_timeout: z.number().int().positive().default(3600),
      /** Full memory dump when a submission does not say (Cuckoo's memory_dump). */
      memory_dump: z.boolean().default(false),
      /** Tasks left running by a crash: true puts them back in the queue, false fails them. */
      reschedule_on_crash: z.boolean().default(true),
    })
    .prefault({}),
  archives: z
    .strictObject({
      /** Passwords tried on encrypted archives, in order. */
      passwords: z.array(z.string()).default(['infected', 'malware', 'virus', 'password']),
      /** Nested archives are opened this deep. */
      max_depth: z.number().int().min(0).default(3),
      /** An archive whose files add up to more than this many bytes is refused. */
      max_total_size: z.number().int().positive().default(1024 ** 3 * 2),
      max_files: z.number().int().positive().default(1000),
    })
    .prefault({}),
  dropped_files: z
    .strictObject({
      /**
       * A dropped file larger than this many bytes keeps only its first bytes, up to this size (a sample
       * that fills its disk must not fill storage); its entry says it was truncated and its real size.
       */
      max_file_size: z.number().int().min(0).default(50 * 1024 ** 2),
      /**
       * Bytes of dropped files kept per task, all files together. Files past it are still listed, with
       * their path and size, without content. Smaller files are kept first, so one huge file cannot
       * crowd out the many small ones a sample usually drops.
       */
      max_total_size: z.number().int().min(0).default(200 * 1024 ** 2),
      /** Dropped files listed per task; more are only counted, in a warning. */
      max_files: z.number().int().min(0).default(1000),
    })
    .prefault({}),
  virustotal: z
    .strictObject({
      /** Key for the VirusTotal-compatible download API; empty disables hash submissions. */
      key: z.string().default(''),
      /** Base URL of the v3 API (`<url>/files/<hash>/download`). */
      url: z.string().url().default('https://www.virustotal.com/api/v3'),
      timeout_ms: z.number().int().positive().default(30000),
    })
    .prefault({}),
  routing: z
    .strictObject({
      /** Route of a task that names none: none, drop, inetsim or internet. */
      default_route: z.enum(['none', 'drop', 'inetsim', 'internet']).default('inetsim'),
      /** Host interface for route=internet; empty means internet routing is unavailable. */
      internet_interface: z.string().default(''),
      vpns: z.array(vpnSchema).default([]),
    })
    .prefault({}),
  cluster: z
    .strictObject({
      /**
       * `all`: one host that serves the API, runs machines and processes (the default). `main`: serves the
       * API and keeps storage; runs no machines. `worker`: runs machines for a main node.
       */
      role: z.enum(['all', 'main', 'worker']).default('all'),
      /** This node's name in the cluster; empty: the host's name. Unique among the nodes of one database. */
      node_name: z.string().regex(/^[A-Za-z0-9_.-]*$/, 'node names may use letters, digits, _ . -').default(''),
      /** A worker: the main node's API (`http://main:8090`), where samples come from and results go. */
      main_url: z.string().default(''),
      /** The credential nodes present to each other (`Authorization: Bearer`); empty: api.token. */
      node_token: z.string().default(''),
      /** Seconds between heartbeats. */
      heartbeat_seconds: z.number().positive().default(5),
      /** Seconds a node holds its tasks and machines after its last heartbeat; then others requeue them. */
      lease_seconds: z.number().positive().default(30),
      /** Largest task folder a worker may upload to the main node, in bytes (the archive as sent). */
      results_limit: z.number().int().positive().default(1024 ** 3 * 16),
      /** Files and folders one uploaded task folder may hold. */
      results_max_entries: z.number().int().positive().default(200_000),
      /** Attempts a worker makes to fetch a sample or upload results before the task fails. */
      transfer_attempts: z.number().int().min(1).default(5),
      /** Seconds before the first retry of a transfer; each further retry waits twice as long. */
      transfer_backoff_seconds: z.number().nonnegative().default(1),
      /**
       * Seconds between two looks of the main node at the remote nodes added through the distributed API
       * (POST /api/node): tasks handed to them, their progress, their /cuckoo/status. No remote node: no look.
       */
      remote_poll_seconds: z.number().positive().default(10),
    })
    .prefault({}),
  /** The analysis machines. Without this list: `machines_auto.count` linux machines linux1..linuxN (`<node_name>-linux1`... when cluster.node_name is set). */
  machines: z.array(machineSchema).optional(),
  machines_auto: z
    .strictObject({
      /** Linux machines made when `machines` is not given; 0: as many as this host runs at once (auto-machines.ts). */
      count: z.number().int().min(0).default(0),
      /** Memory counted for each machine when sizing, in MiB (a linux machine's memory_mb limit is 1024). */
      machine_mb: z.number().int().min(64).default(1024),
      /** Memory left to the host, nestbox's processing and the database, in MiB. */
      reserve_mb: z.number().int().min(0).default(1024),
      /** At most this many machines when sized from the host (processing runs one task at a time per node). */
      max: z.number().int().min(1).default(8),
    })
    .prefault({}),
  logging: z
    .strictObject({
      level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    })
    .prefault({}),
});

/**
 * The whole configuration, with its machines: the file's list, or else the default linux machines
 * sized from this host (`machines_auto`).
 */
export const configSchema = configSectionsSchema.transform((sections) => ({
  ...sections,
  machines: sections.machines ?? defaultMachines(autoMachineCount(hostResources(), sections.machines_auto), sections.cluster.node_name).map((machine) => machineSchema.parse(machine)),
}));

export type Config = z.infer<typeof configSchema>;
export type MachineConfig = z.infer<typeof machineSchema>;
