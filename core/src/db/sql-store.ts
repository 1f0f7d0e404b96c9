import type { Sequelize, Transaction } from 'sequelize';
import { runtimeConfigCache } from './runtime-config-cache.js';

/** What every store shares: its database, and the transactions its service opens through it and passes back to each write. */
export abstract class SqlStore {
  constructor(protected readonly db: Sequelize) {}

  transaction<T>(work: (transaction: Transaction) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /**
   * Every write to a table of an agent's runtime configuration (`RUNTIME_CONFIG_TABLES`) says so: this instance's
   * cached configuration is dropped as the transaction commits, before the write's caller answers anyone.
   */
  protected runtimeConfigChanged(transaction: Transaction): void {
    runtimeConfigCache(this.db).changed(transaction);
  }
}
