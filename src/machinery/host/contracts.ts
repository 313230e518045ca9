import type { Logger } from 'pino';
import type { Route } from '../types.js';

/**
 * Contracts between the parts of the Linux machinery: the sandbox (namespaces, overlay root, cgroups),
 * the per-task network (gateway namespace, fake internet, capture) and the behaviour tracer.
 */

export interface TaskNetworkOptions {
  /** Short unique id for names (namespaces, interfaces); at most 8 characters. */
  id: string;
  route: Route;
  /** Host interface for route=internet ('' = unavailable). */
  internetInterface: string;
  /** Where the full capture goes; complete once close() resolves. */
  pcapPath: string;
  log: Logger;
}

export interface TaskNetwork {
  /** The machine's network namespace: `ip netns` name and its path (/run/netns/<name>) for setns/nsenter. */
  netnsName: string;
  netnsPath: string;
  /** Address of the machine and of its gateway (the fake internet's resolver and router). */
  guestAddress: string;
  gatewayAddress: string;
  /** Route actually in force. */
  route: Route;
  /** Stops the capture, writing every packet to pcapPath, and removes namespaces, interfaces and rules. */
  close(): Promise<void>;
}

export type CreateTaskNetwork = (options: TaskNetworkOptions) => Promise<TaskNetwork>;

export interface TracerOptions {
  /** The sandbox's cgroup in the v2 hierarchy (e.g. /sys/fs/cgroup/unified/nestbox/t42), used as the eBPF filter. */
  cgroupV2Path: string;
  /** Where events go, as JSON lines of report/events.ts. */
  eventsPath: string;
  log: Logger;
  /**
   * How the sample starts in the machine: then only the sample's first process and its descendants are
   * recorded (tracer/sample-scope.ts). Without it, everything in the cgroup is (tests of the tracers alone).
   */
  sample?: SampleStart;
}

export interface SampleStart {
  /** The path the machine's init is executed from, inside the machine; the sample's first process is its child. */
  initPath: string;
  /** The current directory the sample's first process starts in, inside the machine. */
  cwd: string;
}

export interface TracerSession {
  readonly name: 'ebpf' | 'strace';
  /** Fallback tracers that must launch the sample themselves give the command prefix to run it under. */
  wrap?(argv: string[]): string[];
  /** Stops tracing after flushing; resolves with the count of events the tracer had to drop. */
  stop(): Promise<{ lost: number }>;
}

export interface Tracer {
  /** Starts tracing; resolves once events from the cgroup are being recorded. */
  start(options: TracerOptions): Promise<TracerSession>;
}
