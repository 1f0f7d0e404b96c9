import pg from 'pg';

/** A statement as sent: its text, whitespace collapsed, and its parameter values. */
export interface SentStatement {
  text: string;
  values: unknown[];
}

/**
 * The statements `work` sends to `database` through `pg` in this process (a host started by `startTestHost` runs here),
 * the ones `counted` keeps: how a test sees the round trips a path costs, and can explain what each one read.
 */
export async function sentStatementsOf(database: string, work: () => Promise<unknown>, counted: (text: string) => boolean): Promise<SentStatement[]> {
  const sent: SentStatement[] = [];
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, config: unknown, ...rest: unknown[]) {
    const text = typeof config === 'string' ? config : ((config as { text?: string }).text ?? '');
    const values = typeof config === 'string' ? rest[0] : (config as { values?: unknown }).values;
    if (this.database === database && counted(text)) sent.push({ text: text.replace(/\s+/g, ' ').trim(), values: Array.isArray(values) ? values : [] });
    return (original as (...args: unknown[]) => unknown).apply(this, [config, ...rest]);
  } as typeof original;
  try {
    await work();
  } finally {
    pg.Client.prototype.query = original;
  }
  return sent;
}

/** The texts of {@link sentStatementsOf}. */
export async function statementsOf(database: string, work: () => Promise<unknown>, counted: (text: string) => boolean): Promise<string[]> {
  return (await sentStatementsOf(database, work, counted)).map((s) => s.text);
}
