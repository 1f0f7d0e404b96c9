import { QueryTypes, type Transaction } from 'sequelize';
import { SqlStore } from '../db/sql-store.js';

export interface SettingRow {
  config_key: string;
  value: unknown;
  updated_by: string | null;
  updated_at: Date;
}

/** The SQL of runtime settings: the `system_settings` table of stored overrides. */
export class SystemSettingStore extends SqlStore {
  all(): Promise<SettingRow[]> {
    return this.db.query<SettingRow>('SELECT config_key, value, updated_by, updated_at FROM system_settings', { type: QueryTypes.SELECT });
  }

  async value(key: string): Promise<{ value: unknown } | undefined> {
    const [row] = await this.db.query<{ value: unknown }>('SELECT value FROM system_settings WHERE config_key = $1', { bind: [key], type: QueryTypes.SELECT });
    return row;
  }

  async put(key: string, value: unknown, updatedBy: string, transaction: Transaction): Promise<void> {
    await this.db.query(
      `INSERT INTO system_settings (config_key, value, updated_by, updated_at) VALUES ($1, $2, $3, now())
       ON CONFLICT (config_key) DO UPDATE SET value = EXCLUDED.value, updated_by = EXCLUDED.updated_by, updated_at = now()`,
      { bind: [key, JSON.stringify(value), updatedBy], transaction },
    );
  }
}
