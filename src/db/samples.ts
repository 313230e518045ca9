import type { Kysely } from 'kysely';
import type { Db } from './tasks.js';
import type { Database, NewSample, SampleRow } from './schema.js';

export class SampleStore {
  constructor(private readonly db: Kysely<Database>) {}

  async get(id: number): Promise<SampleRow | undefined> {
    return this.db.selectFrom('samples').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async findBySha256(sha256: string, db: Db = this.db): Promise<SampleRow | undefined> {
    return db.selectFrom('samples').selectAll().where('sha256', '=', sha256).executeTakeFirst();
  }

  async findByMd5(md5: string): Promise<SampleRow | undefined> {
    return this.db.selectFrom('samples').selectAll().where('md5', '=', md5).orderBy('id').executeTakeFirst();
  }

  async getMany(ids: readonly number[]): Promise<Map<number, SampleRow>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db.selectFrom('samples').selectAll().where('id', 'in', [...new Set(ids)]).execute();
    return new Map(rows.map((row) => [row.id, row]));
  }

  /** Returns the id of the sample with these hashes, creating the row the first time the file is seen. */
  async upsert(sample: NewSample, db: Db = this.db): Promise<number> {
    await db.insertInto('samples').values(sample).onConflict((oc) => oc.column('sha256').doNothing()).execute();
    const row = await db.selectFrom('samples').select('id').where('sha256', '=', sample.sha256).executeTakeFirstOrThrow();
    return row.id;
  }
}
