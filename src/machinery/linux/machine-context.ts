import type { ArchiveLimits } from '../../storage/archives.js';
import type { DroppedFileLimits } from '../dropped/budget.js';
import type { CreateTaskNetwork, Tracer } from '../host/contracts.js';
import type { SpareNetwork } from '../host/network/index.js';
import type { CgroupLayout } from './cgroups.js';
import type { HostIdRange } from './host-ids.js';
import type { LinuxSettings } from './settings.js';

/** What every session of one linux machine shares, made once by the machinery. */
export interface MachineContext {
  settings: LinuxSettings;
  guestRoot: string;
  /** Host path of the compiled init, bound over /sbin/init. */
  initPath: string;
  seccompPath: string;
  /** The sample's supervisor (native/supervisor.c). */
  supervisorPath: string;
  /** The user namespace launcher (native/userns-exec.c). */
  launcher: string;
  /** Host ids of the machine's ids: root inside is `hostIds.base` on the host. */
  hostIds: HostIdRange;
  cgroupLayout: CgroupLayout;
  hostname: string;
  internetInterface: string;
  archivePasswords: string[];
  /** The configured limits of unpacking archives (`archives`), for looking into one on the host. */
  archiveLimits: ArchiveLimits;
  droppedFileLimits: DroppedFileLimits;
  createTaskNetwork: CreateTaskNetwork;
  /** A network made ahead for the next task, when the machinery keeps one. */
  spareNetwork?: SpareNetwork;
  tracer?: Tracer;
}
