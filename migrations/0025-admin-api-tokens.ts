import type { QueryInterface } from 'sequelize';

/** Administrator API tokens: a hash of each token, never the token, with its permissions subset, expiry and revocation. */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  const sql = (statement: string) => qi.sequelize.query(statement);
  await sql(`CREATE TABLE admin_api_tokens (
    id uuid PRIMARY KEY,
    admin_user_id uuid NOT NULL REFERENCES admin_users (id) ON DELETE CASCADE,
    name varchar(200) NOT NULL,
    token_hash char(64) NOT NULL UNIQUE,
    token_prefix varchar(16) NOT NULL,
    permissions text[],
    expires_at timestamptz,
    revoked_at timestamptz,
    last_used_at timestamptz,
    created_at timestamptz NOT NULL
  )`);
  await sql('CREATE INDEX admin_api_tokens_admin ON admin_api_tokens (admin_user_id, created_at DESC)');
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query('DROP TABLE admin_api_tokens');
}
