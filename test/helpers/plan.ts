import pg from 'pg';

interface PlanNode {
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

const scansOf = (node: PlanNode, relation: string): PlanNode[] => [
  ...(node['Relation Name'] === relation ? [node] : []),
  ...(node.Plans ?? []).flatMap((child) => scansOf(child, relation)),
];

/**
 * How many rows of `relation` the statement read (kept or filtered out, over every loop), run under `EXPLAIN ANALYZE`
 * with its values in a transaction that is rolled back, so what it writes is not kept.
 */
export async function rowsRead(url: string, sql: string, values: unknown[], relation: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('BEGIN');
    const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, values);
    return scansOf(rows[0]!['QUERY PLAN'][0].Plan, relation).reduce(
      (sum, node) => sum + (node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0)) * node['Actual Loops'],
      0,
    );
  } finally {
    await client.query('ROLLBACK').catch(() => undefined);
    await client.end();
  }
}
