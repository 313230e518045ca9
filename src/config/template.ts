/**
 * The configuration file written on first start. Every value shown is the default (a test keeps the two
 * in step), so operators can read what they would change. Environment variables `NESTBOX_<SECTION>_<KEY>`
 * override any key, e.g. `NESTBOX_API_PORT=9000`.
 */
export function configTemplate(token: string): string {
  return `# nestbox configuration. Every key is optional; the values below are the defaults.
# Any key can be overridden from the environment: NESTBOX_<SECTION>_<KEY>, e.g. NESTBOX_API_PORT=9000.

api:
  host: localhost            # address the REST API binds
  port: 8090
  token: "${token}"  # Cuckoo's api_token: clients send "Authorization: Bearer <token>"; "" disables auth
  debug: false               # debug mode: enables GET /exit
  upload_limit: 2147483648   # largest accepted file, in bytes (answers 413 beyond it)
  request_limit: 4294967296  # largest create request, all its files and fields together, in bytes (413 beyond it)

paths:
  storage: storage           # storage/analyses/<id>/ and storage/binaries/<sha256>, relative to this folder
  tmppath: tmp               # Cuckoo's tmppath: submitted files wait here

database:
  connection: ""             # "" = SQLite in nestbox.db here; or sqlite:///path, or postgres://user:pw@host/db

tasks:
  default_timeout: 120       # seconds, for tasks that give none
  critical_timeout: 60       # seconds past the timeout before a machine is stopped by force
  default_priority: 1
  max_priority: 3
  max_timeout: 3600          # largest timeout a client may ask for
  memory_dump: false         # full memory dump when a submission does not say
  reschedule_on_crash: true  # tasks left running by a crash: true re-queues them, false fails them

archives:
  passwords: [infected, malware, virus, password]   # tried on encrypted archives, in order
  max_depth: 3               # nested archives are opened this deep
  max_total_size: 2147483648 # refuse archives that unpack to more bytes than this
  max_files: 1000

dropped_files:               # what the sample wrote or changed, kept in storage/analyses/<id>/files/
  max_file_size: 52428800    # bytes; a larger file keeps only its first 50 MiB, marked truncated
  max_total_size: 209715200  # bytes per task (200 MiB), smallest files first; the rest are listed without content
  max_files: 1000            # files listed per task; more are only counted

virustotal:
  key: ""                    # key for hash submissions through a VirusTotal-compatible download API
  url: https://www.virustotal.com/api/v3
  timeout_ms: 30000

routing:
  default_route: inetsim     # none | drop | inetsim (fake internet) | internet
  internet_interface: ""     # host interface for route=internet; "" = unavailable
  vpns: []                   # [{name, description, interface}]

cluster:                     # several hosts on one PostgreSQL database (README: "A cluster")
  role: all                  # all = one host; main = API and storage only; worker = runs machines for a main node
  node_name: ""              # this node's name; "" = the host's name
  main_url: ""               # worker: the main node's API, e.g. http://main:8090
  node_token: ""             # what nodes present to each other; "" = api.token
  heartbeat_seconds: 5
  lease_seconds: 30          # a node silent this long loses its tasks (requeued) and machines
  results_limit: 17179869184 # largest task folder a worker may upload to the main node, in bytes
  results_max_entries: 200000 # files and folders one uploaded task folder may hold
  transfer_attempts: 5       # tries of a sample download or results upload before the task fails
  transfer_backoff_seconds: 1 # wait before the first retry; doubled for each further one
  remote_poll_seconds: 10    # main node: how often remote nodes added by POST /api/node are looked at

machines_auto:               # the machines made when no "machines:" list is given below
  count: 0                   # 0 = as many linux machines (linux1..linuxN) as this host runs at once:
                             #   min(cores, (memory - reserve_mb) / machine_mb, max), at least 1; or a number
  machine_mb: 1024           # memory counted for each machine (a linux machine's memory_mb limit)
  reserve_mb: 1024           # memory left to the host, processing and the database
  max: 8                     # at most this many when sized from the host

# machines:                  # analysis machines; a list here replaces machines_auto. Kind linux needs no VM image
  # - name: linux1
  #   kind: linux
  #   platform: linux
  #   tags: []
  #   ip: 10.200.0.2         # shown by /machines/list; linux machines get their addresses per task
  #   interface: null
  #   snapshot: null
  #   resultserver_ip: 10.200.0.1
  #   resultserver_port: 2042
  #   options: []
  #   settings: {}
    # Settings of kind linux (namespace sandbox on a Debian guest root) and their defaults:
    #   guest_root_dir: /var/lib/nestbox/guest-root   # built by debootstrap on first use (~1 GB, ~2 min)
    #   mirror: http://deb.debian.org/debian
    #   browser: true                 # chromium in the guest root for URL tasks (~130 MiB download)
    #   host_id_base: 1879048192      # host uid/gid of root inside; the machine's ids 0-65535 are this + 0-65535
    #   run_dir: /run/nestbox/machines
    #   memory_mb: 1024               # memory limit of the whole machine
    #   disk_mb: 512                  # what the sample may write in total
    #   pids_max: 512                 # processes and threads
    #   cpu_percent: 100              # of one core
    #   tracing: true                 # behaviour trace (eBPF, strace where eBPF does not work)
    #   tracer: auto                  # auto, or strace to always trace with strace (the sample can see it)
    #   screenshots: true
    #   screenshot_interval: 1        # seconds
    #   reboot_state_mb: 64           # end state kept for reboot tasks up to this size
    #   sleep_skip_threshold: 10      # seconds: a longer sleep of the sample returns at once (recorded)
    #   log_limit_bytes: 1048576      # sample output kept in analysis.log
  # A QEMU virtual machine, restored for each task from a booted, saved state of nestbox's Debian guest
  # image (built on first use, or beforehand with "nestbox image build"). Its settings and their defaults:
  # - name: qemu1
  #   kind: qemu
  #   settings:
  #     image_dir: /var/lib/nestbox/images   # built images and ready states
  #     run_dir: /run/nestbox/qemu           # per-task sockets, logs and disk overlay
  #     suite: bookworm                      # Debian release of the image
  #     mirror: http://deb.debian.org/debian
  #     extra_packages: []                   # Debian packages added to the image (e.g. strace, for the fallback)
  #     memory_mb: 512
  #     cpus: 1
  #     accel: auto                          # auto (KVM if a boot test passes, else TCG) | kvm | tcg
  #     analyzer: nestbox                    # nestbox (behaviour trace, dropped files) | none (agent only)
  #     cuckoo_cwd: ""                       # platform windows: a Cuckoo 2.0.7 working directory (its Windows analyzer and monitor)
  #     cuckoo_monitor: latest               #   and which of its monitors
  #     tracing: true                        # behaviour trace in the guest (nestbox's monitor)
  #     sleep_skip_threshold: 10             # seconds: a longer sleep of the sample returns at once (recorded)
  #     screenshots: true
  #     screenshot_interval: 1               # seconds
  #     collect_grace: 30                    # seconds past the timeout for the guest's uploads
  #     boot_timeout: 300                    # seconds a first boot (or a reboot task's boot) may take
  #     reboot_state_mb: 64                  # end state (disk overlay) kept for reboot tasks up to this size
  #     log_limit_bytes: 1048576             # analysis.log size limit
  #     max_uploads: 200                     # process dumps per task (dropped files: see dropped_files)
  #     max_upload_mb: 256                   # per dump
  #     max_total_upload_mb: 1024            # all dumps; also caps the behaviour trace
  #     disk: ""                             # an operator's own disk (any QEMU-bootable image with a Cuckoo agent
  #     state: ""                            #   on 10.0.2.15:8000) and its saved state, made on first use
  #     nic_model: virtio-net-pci            # or e1000 (guests without virtio drivers)
  #     disk_bus: virtio                     # or ide

logging:
  level: info                # fatal | error | warn | info | debug | trace | silent
`;
}
