import { randomUUID } from 'node:crypto';
import { hash } from '@node-rs/argon2';
import t from 'tap';
import { AdminClient, BOOTSTRAP_ADMIN, startTestHost } from '../helpers/host.js';
import { query } from '../helpers/services.js';
import type { AuditLogItem } from '@agent-host/core';

type Item = AuditLogItem;

const ITEM_KEYS = ['action', 'actor_id', 'client_ip', 'created_at', 'id', 'outcome', 'payload', 'request_id', 'source', 'target_id', 'target_type', 'trace_id'];

async function createSubAdmin(databaseUrl: string, username: string, password: string, grants: string[]): Promise<string> {
  const id = randomUUID();
  await query(databaseUrl, "INSERT INTO admin_users (id, username, password_hash, role_code, status) VALUES ($1, $2, $3, 'sub_admin', 'active')", [
    id,
    username,
    await hash(password),
  ]);
  for (const code of grants)
    await query(databaseUrl, 'INSERT INTO admin_permission_grants (id, admin_user_id, permission_code) VALUES ($1, $2, $3)', [randomUUID(), id, code]);
  return id;
}

const qs = (params: Record<string, string | number>) => '?' + new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString();

t.test('GET /admin/audit-logs', async (t) => {
  const host = await startTestHost(t);
  const db = host.databaseUrl;

  // Events: anonymous denials, a failed login, a denied sub admin, logins.
  for (let i = 0; i < 15; i++) t.equal((await fetch(host.url + '/admin/audit-logs')).status, 401, 'without login: 401');
  t.equal((await new AdminClient(host.url).login(BOOTSTRAP_ADMIN.username, 'wrong password')).status, 401, 'a failed login');
  const viewerId = await createSubAdmin(db, 'viewer', 'viewer-password', ['agents.read']);
  const viewer = new AdminClient(host.url);
  t.equal((await viewer.login('viewer', 'viewer-password')).status, 200);
  const denied = await viewer.request('GET', '/admin/audit-logs');
  t.equal(denied.status, 403, 'a sub admin without audit_logs.read: 403');
  t.match(denied.body, { detail: 'missing permission audit_logs.read', code: 'PERMISSION_MISSING', request_id: String });
  const deniedRows = await query(db, "SELECT request_id FROM admin_action_audits WHERE action = 'access.denied' AND actor_id = $1", [viewerId]);
  t.same(
    deniedRows.map((row) => row.request_id),
    [denied.headers.get('x-request-id')],
    'the audit row names the request that wrote it, as the error body does',
  );
  t.equal(denied.body.request_id, denied.headers.get('x-request-id'));
  const readerId = await createSubAdmin(db, 'reader', 'reader-password', ['audit_logs.read']);
  const reader = new AdminClient(host.url);
  t.equal((await reader.login('reader', 'reader-password')).status, 200);
  t.equal((await reader.request('GET', '/admin/audit-logs')).status, 200, 'a sub admin with audit_logs.read may read');
  const admin = new AdminClient(host.url);
  t.equal((await admin.login()).status, 200);
  t.equal((await admin.request('POST', '/admin/auth/refresh')).status, 200);
  const [root] = await query(db, 'SELECT id FROM admin_users WHERE username = $1', [BOOTSTRAP_ADMIN.username]);
  // Two rows with known times for since/until.
  await query(
    db,
    "UPDATE admin_action_audits SET created_at = '2020-01-15T10:00:00Z' WHERE id = (SELECT min(id) FROM admin_action_audits WHERE action = 'access.denied')",
  );
  await query(db, "UPDATE admin_action_audits SET created_at = '2020-03-15T10:00:00Z' WHERE action = 'admin_user.bootstrap'");

  const list = async (params: Record<string, string | number> = {}) => {
    const response = await admin.request('GET', '/admin/audit-logs' + qs(params));
    if (response.status !== 200) throw new Error(`${response.status} ${JSON.stringify(response.body)}`);
    return response.body as { items: Item[]; next_cursor: string | null; limit: number };
  };
  const dbRows = await query(db, 'SELECT id::text AS id, action, outcome, actor_id FROM admin_action_audits ORDER BY admin_action_audits.id DESC');
  const all = await list({ limit: 200 });

  t.test('every row, newest first, in the {items, next_cursor, limit} envelope', async (t) => {
    t.same(
      all.items.map((i) => i.id),
      dbRows.map((r) => r.id),
      'the same rows as the table, by id descending',
    );
    t.ok(all.items.length >= 20 && all.items.some((i) => i.id.length > 1), `enough rows to page through (${all.items.length})`);
    t.equal(all.next_cursor, null, 'one page holds them all: next_cursor is null');
    t.equal(all.limit, 200);
    for (const item of all.items) t.same(Object.keys(item).sort(), ITEM_KEYS, `item ${item.id} has exactly the documented fields`);
    const login = all.items.find((i) => i.action === 'auth.login' && i.outcome === 'success' && i.actor_id === root!.id)!;
    t.type(login.id, 'string', 'id is a string');
    t.equal(login.source, 'core.admin');
    t.equal(login.target_type, 'admin_session');
    t.match(login.client_ip, /127\.0\.0\.1/);
    t.type(login.payload, 'object');
    t.match(login.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, 'created_at is ISO 8601 UTC');
    const byDefault = await list();
    t.equal(byDefault.limit, 50, 'limit defaults to 50');
  });

  t.test('each filter narrows the results to exactly the matching rows', async (t) => {
    const expectIds = async (params: Record<string, string>, keep: (i: Item) => boolean, label: string) => {
      const expected = all.items.filter(keep).map((i) => i.id);
      t.ok(
        expected.length > 0 && expected.length < all.items.length,
        `${label}: the filter matches some rows, not all (${expected.length}/${all.items.length})`,
      );
      t.same(
        (await list({ ...params, limit: 200 })).items.map((i) => i.id),
        expected,
        label,
      );
    };
    await expectIds({ actor_id: viewerId }, (i) => i.actor_id === viewerId, 'actor_id');
    t.same(
      all.items.filter((i) => i.actor_id === viewerId).map((i) => [i.action, i.outcome]),
      [
        ['access.denied', 'denied'],
        ['auth.login', 'success'],
      ],
      'the sub admin logged in, then was denied',
    );
    await expectIds({ action: 'auth.login' }, (i) => i.action === 'auth.login', 'action, exact');
    await expectIds({ action: 'auth.*' }, (i) => i.action.startsWith('auth.'), 'action, prefix auth.*');
    t.ok(
      (await list({ action: 'auth.*' })).items.some((i) => i.action === 'auth.refresh'),
      'the prefix covers auth.refresh too',
    );
    t.same((await list({ action: 'auth' })).items, [], 'an exact action is not a prefix');
    t.same((await list({ action: 'a%.*' })).items, [], 'LIKE wildcards in a prefix are literal');
    await expectIds({ outcome: 'failure' }, (i) => i.outcome === 'failure', 'outcome=failure');
    await expectIds({ outcome: 'denied' }, (i) => i.outcome === 'denied', 'outcome=denied');
    await expectIds({ outcome: 'success' }, (i) => i.outcome === 'success', 'outcome=success');
    const failed = (await list({ outcome: 'failure' })).items;
    t.same(
      failed.map((i) => [i.action, i.payload.username]),
      [['auth.login', BOOTSTRAP_ADMIN.username]],
      'the failed login',
    );
    const inRange = (from: string, to: string) => (i: Item) => i.created_at >= from && i.created_at < to;
    await expectIds({ since: '2020-01-01T00:00:00Z', until: '2020-02-01T00:00:00Z' }, inRange('2020-01-01', '2020-02-01'), 'since and until');
    t.same(
      (await list({ since: '2020-01-01', until: '2020-02-01' })).items.map((i) => i.action),
      ['access.denied'],
      'dates mean midnight UTC',
    );
    await expectIds({ until: '2020-12-31T23:59:59+01:00' }, (i) => i.created_at < '2021', 'until with an offset');
    await expectIds({ since: '2021-01-01T00:00:00.000Z' }, (i) => i.created_at >= '2021', 'since');
    t.same(
      (await list({ until: '2020-03-15T10:00:00Z' })).items.map((i) => i.action),
      ['access.denied'],
      'until is exclusive',
    );
    t.same(
      (await list({ since: '2020-03-15T10:00:00Z', until: '2020-03-15T10:00:00.001Z' })).items.map((i) => i.action),
      ['admin_user.bootstrap'],
      'since is inclusive',
    );
    await expectIds(
      { actor_id: readerId, action: 'auth.*', outcome: 'success' },
      (i) => i.actor_id === readerId && i.action.startsWith('auth.') && i.outcome === 'success',
      'filters combine',
    );
  });

  t.test('cursor pagination walks every row once, in order, even while rows are appended', async (t) => {
    const walk = async (params: Record<string, string | number>, onPage?: () => Promise<void>) => {
      const ids: string[] = [];
      let cursor: string | null | undefined;
      let pages = 0;
      do {
        const page = await list({ ...params, ...(cursor && { cursor }) });
        t.ok(page.items.length <= Number(params.limit), 'no page is larger than limit');
        ids.push(...page.items.map((i) => i.id));
        cursor = page.next_cursor;
        pages++;
        await onPage?.();
        if (pages > 100) throw new Error('pagination does not end');
      } while (cursor);
      return { ids, pages };
    };
    const { ids, pages } = await walk({ limit: 7 }, () =>
      query(db, "INSERT INTO admin_action_audits (action, outcome, source, payload, created_at) VALUES ('test.appended', 'success', 'test', '{}', now())").then(
        () => undefined,
      ),
    );
    t.same(
      ids,
      all.items.map((i) => i.id),
      'the walk equals the full listing: no duplicates, no gaps, rows added meanwhile do not shift it',
    );
    t.equal(new Set(ids).size, ids.length, 'no duplicates');
    t.equal(pages, Math.ceil(all.items.length / 7), 'as many pages as needed');
    const deniedCount = all.items.filter((i) => i.outcome === 'denied').length;
    const exact = await walk({ outcome: 'denied', limit: deniedCount });
    t.same([exact.pages, exact.ids.length], [1, deniedCount], 'a page that ends exactly at the last row has next_cursor null');
    const filtered = await walk({ outcome: 'denied', limit: 4 });
    t.same(
      filtered.ids,
      all.items.filter((i) => i.outcome === 'denied').map((i) => i.id),
      'the cursor keeps the filters of the walk',
    );
  });

  t.test('invalid query parameters are 422 with {loc, msg, type} issues', async (t) => {
    const cases: [Record<string, string>, (string | number)[]][] = [
      [{ since: 'yesterday' }, ['query', 'since']],
      [{ until: '2025-13-40T00:00:00Z' }, ['query', 'until']],
      [{ since: '2025-01-01T00:00:00' }, ['query', 'since']],
      [{ limit: '0' }, ['query', 'limit']],
      [{ limit: '201' }, ['query', 'limit']],
      [{ limit: 'ten' }, ['query', 'limit']],
      [{ outcome: 'maybe' }, ['query', 'outcome']],
      [{ action: 'auth*' }, ['query', 'action']],
      [{ cursor: 'not-a-cursor' }, ['query', 'cursor']],
      [{ cursor: Buffer.from('{"before":"0 OR 1=1"}').toString('base64url') }, ['query', 'cursor']],
      [{ actor: 'x' }, ['query']],
    ];
    for (const [params, loc] of cases) {
      const { status, body } = await admin.request('GET', '/admin/audit-logs' + qs(params));
      t.equal(status, 422, `${JSON.stringify(params)}: 422`);
      t.ok(Array.isArray(body.detail) && body.detail.length > 0, 'detail is a list');
      t.same(body.detail[0]?.loc, loc, `${JSON.stringify(params)}: loc names the parameter`);
      t.ok(
        body.detail.every((d: { msg: string; type: string }) => d.msg && d.type),
        'each issue has msg and type',
      );
    }
  });
});
