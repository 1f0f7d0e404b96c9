import pg from 'pg';

/**
 * The SQL texts `work` sends to `database` through `pg` in this process (a host started by `startTestHost` runs here),
 * whitespace collapsed, the ones `counted` keeps: how a test sees the round trips a path costs.
 */
export async function statementsOf(database: string, work: () => Promise<unknown>, counted: (text: string) => boolean): Promise<string[]> {
  const sent: string[] = [];
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, config: unknown, ...rest: unknown[]) {
    const text = typeof config === 'string' ? config : ((config as { text?: string }).text ?? '');
    if (this.database === database && counted(text)) sent.push(text.replace(/\s+/g, ' ').trim());
    return (original as (...args: unknown[]) => unknown).apply(this, [config, ...rest]);
  } as typeof original;
  try {
    await work();
  } finally {
    pg.Client.prototype.query = original;
  }
  return sent;
}
