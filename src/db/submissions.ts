import type { Kysely } from 'kysely';
import { nowIso } from '../util/time.js';
import type { Db } from './tasks.js';
import type { Database } from './schema.js';

export class SubmissionStore {
  constructor(private readonly db: Kysely<Database>) {}

  async create(tmpPath: string | null, db: Db = this.db): Promise<number> {
    const row = await db
      .insertInto('submissions')
      .values({ tmp_path: tmpPath, added_on: nowIso() })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }
}
