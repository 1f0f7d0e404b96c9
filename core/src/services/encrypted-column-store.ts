import { QueryTypes, type Sequelize } from 'sequelize';

/** Where ciphertexts are stored: a table, its key column and the value's column (names from code, never from input). */
export interface CiphertextColumn {
  table: string;
  column: string;
  id: string;
}

/** The SQL of stored ciphertexts, column by column: what re-encryption reads and rewrites. */
export class EncryptedColumnStore {
  constructor(private readonly db: Sequelize) {}

  values(at: CiphertextColumn): Promise<{ id: string; value: string }[]> {
    return this.db.query<{ id: string; value: string }>(`SELECT ${at.id} AS id, ${at.column} AS value FROM ${at.table} ORDER BY ${at.id}`, {
      type: QueryTypes.SELECT,
    });
  }

  /** Writes `next` only if the row still holds `previous` (nobody rewrote it meanwhile). */
  async replace(at: CiphertextColumn, rowId: string, previous: string, next: string): Promise<void> {
    await this.db.query(`UPDATE ${at.table} SET ${at.column} = $2 WHERE ${at.id} = $1 AND ${at.column} = $3`, { bind: [rowId, next, previous] });
  }
}
