import type { QueryInterface } from 'sequelize';

/**
 * `try_uuid(text)`: the uuid a path parameter names, or NULL when it is not
 * one. Lookups compare `id = try_uuid($1)`, which uses the primary key's
 * index (`id::text = $1` scans the whole table), and an id that is not a
 * uuid still finds nothing instead of failing the query.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query(`
    CREATE OR REPLACE FUNCTION try_uuid(value text) RETURNS uuid LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
    BEGIN
      RETURN value::uuid;
    EXCEPTION WHEN invalid_text_representation THEN
      RETURN NULL;
    END
    $$`);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query('DROP FUNCTION IF EXISTS try_uuid(text)');
}
