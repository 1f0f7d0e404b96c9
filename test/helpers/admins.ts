import { AdminClient, BOOTSTRAP_ADMIN } from './host.js';

/** The token of a challenge `client` just created and verified with `password`; a refused verify throws. */
export async function challengeToken(client: AdminClient, password = BOOTSTRAP_ADMIN.password): Promise<string> {
  const { body: challenge } = await client.request('POST', '/admin/auth/challenges');
  const { status, body } = await client.request('POST', `/admin/auth/challenges/${challenge.challenge_id}/verify`, { nonce: challenge.nonce, password });
  if (status !== 200) throw new Error(`verify failed: ${JSON.stringify(body)}`);
  return body.challenge_token;
}

/** The `x-admin-challenge-token` header of a challenge `client` just verified with `password`. */
export async function challengeHeader(client: AdminClient, password = BOOTSTRAP_ADMIN.password): Promise<Record<string, string>> {
  return { 'x-admin-challenge-token': await challengeToken(client, password) };
}

/** A sub_admin created through the API by `root` (the bootstrap super admin) with `permissionCodes`, logged in. */
export async function createSubAdmin(
  root: AdminClient,
  username: string,
  permissionCodes: string[],
): Promise<{ client: AdminClient; id: string; username: string }> {
  const password = `${username}-password-1`;
  const created = await root.request('POST', '/admin/admin-users', { username, password, permission_codes: permissionCodes }, await challengeHeader(root));
  if (created.status !== 201) throw new Error(`creating ${username}: ${created.status} ${JSON.stringify(created.body)}`);
  const client = new AdminClient(root.baseUrl);
  await client.login(username, password);
  return { client, id: created.body.admin_user_id, username };
}
