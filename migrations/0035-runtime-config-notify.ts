import type { QueryInterface } from 'sequelize';

// As core/src/db/runtime-config-cache.ts names them when this migration was written; a table added to that list later gets its trigger in a later migration.
const CHANNEL = 'agent_host_runtime_config';
const TABLES = ['agents', 'knowledge_mounts', 'knowledge_sources', 'agent_skill_mounts', 'skills', 'skill_versions', 'agent_mcp_mounts', 'mcp_servers'];

/**
 * Every change to a table of an agent's runtime configuration notifies `agent_host_runtime_config`, once per
 * statement (Postgres folds the same notification within a transaction into one, sent at commit): each instance's
 * cache of that configuration hears it and starts empty, whichever instance, or person at a SQL prompt, made it.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  const sql = (statement: string) => qi.sequelize.query(statement);
  await sql(`CREATE FUNCTION agent_host_runtime_config_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('${CHANNEL}', '');
      RETURN NULL;
    END $$`);
  for (const table of TABLES) {
    await sql(`CREATE TRIGGER ${table}_runtime_config_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${table}
      FOR EACH STATEMENT EXECUTE FUNCTION agent_host_runtime_config_changed()`);
  }
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  const sql = (statement: string) => qi.sequelize.query(statement);
  for (const table of TABLES) await sql(`DROP TRIGGER ${table}_runtime_config_changed ON ${table}`);
  await sql('DROP FUNCTION agent_host_runtime_config_changed()');
}
