import type { Kysely } from 'kysely';
import { GuestStore } from './guests.js';
import { MachineStore } from './machines.js';
import { SampleStore } from './samples.js';
import type { Database } from './schema.js';
import { SubmissionStore } from './submissions.js';
import { TaskStore } from './tasks.js';

/** The typed data layer the rest of nestbox uses; endpoints never build SQL themselves. */
export interface Stores {
  db: Kysely<Database>;
  tasks: TaskStore;
  samples: SampleStore;
  machines: MachineStore;
  submissions: SubmissionStore;
  guests: GuestStore;
}

export function createStores(db: Kysely<Database>): Stores {
  return {
    db,
    tasks: new TaskStore(db),
    samples: new SampleStore(db),
    machines: new MachineStore(db),
    submissions: new SubmissionStore(db),
    guests: new GuestStore(db),
  };
}
