import type { Sequelize } from 'sequelize';

/** Postgres's code for a relation that does not exist. */
const UNDEFINED_TABLE = '42P01';

/** The SQL of `SequelizeMeta`, where umzug records each migration it applied (core/src/db/migrator.ts). */
export class MigrationRecordStore {
  constructor(private readonly db: Sequelize) {}

  /** The names of the applied migrations: none on a new database, where umzug has not made the table yet. */
  async applied(): Promise<Set<string>> {
    try {
      const [rows] = await this.db.query('SELECT name FROM "SequelizeMeta"');
      return new Set((rows as { name: string }[]).map((row) => row.name));
    } catch (error) {
      if ((error as { original?: { code?: string } }).original?.code === UNDEFINED_TABLE) return new Set();
      throw error;
    }
  }
}
