import type { Sequelize } from 'sequelize';
import { EncryptedColumnStore } from './encrypted-column-store.js';
import type { Keyring } from './secrets.js';

/** Every column holding ciphertexts, by table and key column: what `agent-host secrets reencrypt` walks. */
export const ENCRYPTED_COLUMNS = [{ table: 'mcp_credentials', column: 'encrypted_secret_json', id: 'id' }] as const;

type EncryptedColumn = (typeof ENCRYPTED_COLUMNS)[number];

/** The additional authenticated data of a stored value: its table, row and column. */
export const storedAt = (at: Pick<EncryptedColumn, 'table' | 'column'>, rowId: string) => `${at.table}:${rowId}:${at.column}`;

/**
 * Rewrites every stored ciphertext that is not under the active key in the current format (an older key, or a `v1`
 * value without its row bound), one row at a time; a value no key decrypts stops the walk with its row named.
 */
export async function reencryptAll(db: Sequelize, keyring: Keyring): Promise<{ table: string; column: string; rewritten: number; current: number }[]> {
  const store = new EncryptedColumnStore(db);
  const report = [];
  for (const at of ENCRYPTED_COLUMNS) {
    const rows = await store.values(at);
    let rewritten = 0;
    for (const row of rows) {
      if (keyring.isCurrent(row.value)) continue;
      let plaintext: string;
      try {
        plaintext = keyring.decrypt(row.value, storedAt(at, row.id));
      } catch (error) {
        throw new Error(`${at.table} ${row.id} (${at.column}): ${(error as Error).message}`, { cause: error });
      }
      // Only if nobody rewrote it meanwhile (a rotation between the read and this update).
      await store.replace(at, row.id, row.value, keyring.encrypt(plaintext, storedAt(at, row.id)));
      rewritten++;
    }
    report.push({ table: at.table, column: at.column, rewritten, current: rows.length - rewritten });
  }
  return report;
}
