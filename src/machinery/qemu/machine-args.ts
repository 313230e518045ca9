import { createHash } from 'node:crypto';

/**
 * The virtual hardware of a nestbox guest and the QEMU command line for it. A saved memory state only
 * loads into identical hardware, so the same function builds the command line of the boot that saves
 * the state and of every run restored from it; only the backends (files, sockets, tap) differ.
 *
 * Two network cards: the agent's (restricted user-mode networking: the guest reaches nothing, the host
 * reaches the agent through a forwarded loopback port) and the analysis card the sample uses, bridged into
 * the task's network namespace. Three virtio-serial ports carry the analyzer's results to the host while
 * the sample runs, out of its reach.
 */
export type Accelerator = 'kvm' | 'tcg';

export interface Hardware {
  accel: Accelerator;
  memoryMb: number;
  cpus: number;
  /** virtio for nestbox's image; e1000 and ide for guests without virtio drivers (Windows). */
  nicModel: 'virtio-net-pci' | 'e1000';
  diskBus: 'virtio' | 'ide';
}

export const AGENT_MAC = '52:54:00:4e:42:01';
export const ANALYSIS_MAC = '52:54:00:4e:42:02';
export const AGENT_NETWORK = '10.0.2.0/24';
export const AGENT_GUEST_ADDRESS = '10.0.2.15';
export const AGENT_GUEST_PORT = 8000;
export const RESULT_CHANNELS = ['trace', 'log', 'files'] as const;
export type ResultChannel = (typeof RESULT_CHANNELS)[number];
export const channelPortName = (channel: ResultChannel) => `org.nestbox.${channel}`;

/** The descriptor a restoring QEMU reads its saved state from (the caller opens the file and passes it). */
export const STATE_FD = 3;

/**
 * QEMU's own seccomp filter. A sample that escapes the guest into QEMU can then neither start a program,
 * nor gain privileges, nor change scheduling or resource limits, nor use obsolete system calls. Nothing
 * nestbox asks of QEMU spawns a process: states are read from an inherited descriptor and written to a socket.
 */
export const SANDBOX_ARGS = ['-sandbox', 'on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny'];

export interface ColdBoot {
  kernel: string;
  initrd: string;
}

export interface MachineWiring {
  /** Shown in `ps` (process name, at most 15 characters) so leftovers can be recognised. */
  processName: string;
  disk: string;
  qmpSocket: string;
  /** Host loopback port forwarded to the agent. */
  agentPort: number;
  serialLog: string;
  /** Unix socket per result channel (QEMU listens); null discards what the guest writes. */
  channels: Record<ResultChannel, string | null>;
  /** Host tap device behind the analysis card; null leaves the card unplugged. */
  tap: string | null;
  /** A cold boot (of nestbox's kernel, or null: of the disk, through the firmware), or a restore from a saved memory state. */
  start: { boot: ColdBoot | null } | { stateFile: string };
}

export function kernelCommandLine(): string {
  return [
    'console=ttyS0',
    'quiet',
    'panic=-1',
    'mitigations=off',
    'vt.global_cursor_default=0',
    `nestbox.agent_mac=${AGENT_MAC}`,
    `nestbox.agent_address=${AGENT_GUEST_ADDRESS}/24`,
  ].join(' ');
}

function hardwareArgs(hardware: Hardware): string[] {
  return [
    '-machine', `pc,accel=${hardware.accel}`,
    '-cpu', hardware.accel === 'kvm' ? 'host' : 'max',
    '-m', String(hardware.memoryMb),
    '-smp', String(hardware.cpus),
    '-nodefaults',
    '-no-user-config',
    '-vga', 'std',
    '-display', 'none',
    '-rtc', 'base=utc',
    '-no-reboot',
    '-device', 'virtio-serial-pci,id=vser',
  ];
}

/** Identifies the hardware (and QEMU build) a saved state belongs to. */
export function hardwareKey(hardware: Hardware, qemuVersion: string): string {
  const signature = JSON.stringify({ hardware, args: hardwareArgs(hardware), cmdline: kernelCommandLine(), qemuVersion, RESULT_CHANNELS });
  return `${hardware.accel}-${createHash('sha256').update(signature).digest('hex').slice(0, 12)}`;
}

export function qemuArgv(hardware: Hardware, wiring: MachineWiring): string[] {
  const args = ['-name', `nestbox,process=${wiring.processName}`, ...SANDBOX_ARGS, ...hardwareArgs(hardware)];
  args.push('-drive', `file=${optionValue(wiring.disk)},if=none,id=root,format=qcow2,cache=unsafe,discard=unmap`);
  args.push('-device', hardware.diskBus === 'virtio' ? 'virtio-blk-pci,drive=root' : 'ide-hd,drive=root,bus=ide.0');
  args.push(
    '-netdev',
    `user,id=agent,restrict=on,net=${AGENT_NETWORK},hostfwd=tcp:127.0.0.1:${wiring.agentPort}-${AGENT_GUEST_ADDRESS}:${AGENT_GUEST_PORT}`,
  );
  args.push('-device', `${hardware.nicModel},netdev=agent,mac=${AGENT_MAC}`);
  if (wiring.tap) {
    args.push('-netdev', `tap,id=analysis,ifname=${wiring.tap},script=no,downscript=no,vhost=off,vnet_hdr=off`);
    args.push('-device', `${hardware.nicModel},netdev=analysis,mac=${ANALYSIS_MAC}`);
  } else {
    args.push('-device', `${hardware.nicModel},mac=${ANALYSIS_MAC}`);
  }
  for (const channel of RESULT_CHANNELS) {
    const socket = wiring.channels[channel];
    args.push('-chardev', socket ? `socket,id=ch-${channel},path=${optionValue(socket)},server=on,wait=off` : `null,id=ch-${channel}`);
    args.push('-device', `virtserialport,bus=vser.0,chardev=ch-${channel},name=${channelPortName(channel)}`);
  }
  args.push('-serial', `file:${optionValue(wiring.serialLog)}`);
  args.push('-qmp', `unix:${optionValue(wiring.qmpSocket)},server=on,wait=off`);
  if ('boot' in wiring.start) {
    const { boot } = wiring.start;
    if (boot) args.push('-kernel', boot.kernel, '-initrd', boot.initrd, '-append', kernelCommandLine());
  } else {
    args.push('-incoming', `fd:${STATE_FD}`);
  }
  return args;
}

/** QEMU option values end at a comma; a literal comma is written twice. */
function optionValue(value: string): string {
  return value.replaceAll(',', ',,');
}
