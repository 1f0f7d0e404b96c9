import type { Sequelize, Transaction } from 'sequelize';

/** What every store shares: its database, and the transactions its service opens through it and passes back to each write. */
export abstract class SqlStore {
  constructor(protected readonly db: Sequelize) {}

  transaction<T>(work: (transaction: Transaction) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }
}
