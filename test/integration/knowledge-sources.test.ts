// Knowledge sources and their mounts on agents (spec 2.6, 4.8), with the
// managed-correction rules 1 and 2 and the knowledge permissions.
import { randomUUID } from 'node:crypto';
import { hash } from '@node-rs/argon2';
import t from 'tap';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { createSource, upload } from '../helpers/knowledge.js';
import { query } from '../helpers/services.js';

t.test('knowledge sources, mounts and the managed-correction rules', async (t) => {
  const host = await startTestHost(t);
  const admin = new AdminClient(host.url);
  await admin.login();
  const agent = (await admin.request('POST', '/agents', { name: 'Desk', agent_type: 'chat' })).body;

  t.test('sources: create, list, detail, update, with chunking validated', async (t) => {
    const created = await admin.request('POST', '/knowledge-sources', {
      name: 'Policies',
      description: 'HR',
      chunking_strategy: 'by_title',
      chunking_params: { max_characters: 800 },
    });
    t.equal(created.status, 201);
    t.match(created.body, {
      name: 'Policies',
      source_kind: 'standard',
      managed_for_agent_id: null,
      chunking_strategy: 'by_title',
      chunking_params: { max_characters: 800, overlap: 0 },
      document_count: 0,
    });
    const defaults = await createSource(admin, { name: 'Defaults' });
    t.same(
      [defaults.chunking_strategy, defaults.chunking_params],
      ['recursive_character', { chunk_size: 1000, chunk_overlap: 150 }],
      'a source without chunking gets the default strategy',
    );
    const list = await admin.request('GET', '/knowledge-sources?limit=1');
    t.same(Object.keys(list.body).sort(), ['items', 'limit', 'next_cursor']);
    t.equal(list.body.items[0].name, 'Defaults', 'newest first');
    t.equal((await admin.request('GET', `/knowledge-sources?limit=1&cursor=${list.body.next_cursor}`)).body.items[0].name, 'Policies', 'the cursor pages on');
    const patched = await admin.request('PATCH', `/knowledge-sources/${created.body.source_id}`, { name: 'HR policies', chunking_strategy: 'markdown' });
    t.match(
      patched.body,
      { name: 'HR policies', chunking_strategy: 'markdown', chunking_params: { chunk_size: 1000, chunk_overlap: 150 } },
      'a new strategy starts from its own defaults',
    );
    t.equal((await admin.request('GET', `/knowledge-sources/${created.body.source_id}`)).body.name, 'HR policies');

    const unknown = await admin.request('POST', '/knowledge-sources', { name: 'x', chunking_strategy: 'semantic' });
    t.equal(unknown.status, 422);
    t.same(unknown.body.detail[0].loc, ['body', 'chunking_strategy']);
    const overlap = await admin.request('POST', '/knowledge-sources', { name: 'x', chunking_params: { chunk_size: 100, chunk_overlap: 100 } });
    t.same([overlap.status, overlap.body.detail[0].loc], [422, ['body', 'chunking_params', 'chunk_overlap']], 'overlap must stay below the chunk size');
    const managed = await admin.request('POST', '/knowledge-sources', { name: 'x', source_kind: 'managed_correction' });
    t.same([managed.status, managed.body.detail[0].loc], [422, ['body', 'source_kind']], 'managed_correction sources are not created by hand');
    t.equal((await admin.request('GET', `/knowledge-sources/${randomUUID()}`)).status, 404);
  });

  t.test('mounts: create, list, duplicate, delete by mount_id or by source_id', async (t) => {
    const a = await createSource(admin, { name: 'A' });
    const b = await createSource(admin, { name: 'B' });
    const mounted = await admin.request('POST', `/agents/${agent.agent_id}/mounts`, { source_id: a.source_id });
    t.equal(mounted.status, 201);
    t.match(mounted.body, { agent_id: agent.agent_id, source_id: a.source_id, source_name: 'A', source_kind: 'standard' });
    t.equal((await admin.request('POST', `/agents/${agent.agent_id}/mounts`, { source_id: a.source_id })).status, 409, 'a source is mounted once per agent');
    await admin.request('POST', `/agents/${agent.agent_id}/mounts`, { source_id: b.source_id });
    t.same(
      (await admin.request('GET', `/agents/${agent.agent_id}/mounts`)).body.items.map((m: { source_name: string }) => m.source_name),
      ['A', 'B'],
    );
    const byId = await admin.request('DELETE', `/agents/${agent.agent_id}/mounts/${mounted.body.mount_id}`);
    t.match(byId.body, { status: 'deleted', source_id: a.source_id, matched_by: 'mount_id' });
    const bySource = await admin.request('DELETE', `/agents/${agent.agent_id}/mounts/${b.source_id}`);
    t.match(
      bySource.body,
      { status: 'deleted', source_id: b.source_id, matched_by: 'source_id' },
      'no mount has that id, so the source of a mount of this agent matches',
    );
    t.equal((await admin.request('DELETE', `/agents/${agent.agent_id}/mounts/${b.source_id}`)).status, 404);
    t.equal((await admin.request('POST', `/agents/${randomUUID()}/mounts`, { source_id: a.source_id })).status, 404);
    t.equal((await admin.request('POST', `/agents/${agent.agent_id}/mounts`, { source_id: randomUUID() })).status, 404);
  });

  t.test('a managed_correction source refuses manual mount, unmount, PATCH, upload, document delete and ingest', async (t) => {
    const sourceId = randomUUID();
    await query(
      host.databaseUrl,
      "INSERT INTO knowledge_sources (id, name, source_kind, managed_for_agent_id, chunking_strategy) VALUES ($1, 'Corrections', 'managed_correction', $2, 'recursive_character')",
      [sourceId, agent.agent_id],
    );
    const documentId = randomUUID();
    await query(
      host.databaseUrl,
      "INSERT INTO knowledge_documents (id, source_id, filename, content_type, size_bytes, sha256, object_key, status, vector_status, metadata_json) VALUES ($1, $2, 'c.md', 'text/markdown', 1, 'x', 'k/c.md', 'indexed', 'indexed', '{\"document_origin\": \"managed_correction\"}')",
      [documentId, sourceId],
    );
    const mountId = randomUUID();
    await query(host.databaseUrl, 'INSERT INTO knowledge_mounts (id, agent_id, source_id) VALUES ($1, $2, $3)', [mountId, agent.agent_id, sourceId]);
    const other = (await admin.request('POST', '/agents', { name: 'Other', agent_type: 'chat' })).body;

    t.match((await admin.request('GET', `/knowledge-sources/${sourceId}`)).body, { source_kind: 'managed_correction', managed_for_agent_id: agent.agent_id });
    t.equal((await admin.request('POST', `/agents/${other.agent_id}/mounts`, { source_id: sourceId })).status, 409, 'rule 1: not mounted to another agent');
    t.equal((await admin.request('DELETE', `/agents/${agent.agent_id}/mounts/${mountId}`)).status, 409, 'rule 1: not unmounted by mount_id');
    t.equal((await admin.request('DELETE', `/agents/${agent.agent_id}/mounts/${sourceId}`)).status, 409, 'rule 1: not unmounted by source_id');
    const patch = await admin.request('PATCH', `/knowledge-sources/${sourceId}`, { name: 'Renamed' });
    t.equal(patch.status, 409, 'rule 2: no generic PATCH');
    t.match(patch.body.detail, /managed_correction/);
    t.equal((await upload(admin, sourceId, { filename: 'a.txt', contentType: 'text/plain', data: 'hello' })).status, 409, 'rule 2: no upload');
    t.equal((await admin.request('DELETE', `/knowledge-sources/${sourceId}/documents/${documentId}`)).status, 409, 'rule 2: no document delete');
    t.equal((await admin.request('POST', `/knowledge-sources/${sourceId}/ingest`, {})).status, 409, 'rule 2: no ingest');
    t.equal(
      (await admin.request('GET', `/knowledge-sources/${sourceId}/documents/${documentId}`)).body.metadata_json.document_origin,
      'managed_correction',
      'reading stays allowed',
    );
  });

  t.test('knowledge.read reads, knowledge.write changes', async (t) => {
    const id = randomUUID();
    await query(host.databaseUrl, "INSERT INTO admin_users (id, username, password_hash, role_code) VALUES ($1, 'reader', $2, 'sub_admin')", [
      id,
      await hash('reader-password'),
    ]);
    await query(host.databaseUrl, "INSERT INTO admin_permission_grants (id, admin_user_id, permission_code) VALUES ($1, $2, 'knowledge.read')", [
      randomUUID(),
      id,
    ]);
    const reader = new AdminClient(host.url);
    await reader.login('reader', 'reader-password');
    t.equal((await reader.request('GET', '/knowledge-sources')).status, 200);
    const denied = await reader.request('POST', '/knowledge-sources', { name: 'nope' });
    t.match([denied.status, denied.body], [403, { detail: 'missing permission knowledge.write', code: 'PERMISSION_MISSING' }]);
    t.equal((await new AdminClient(host.url).request('GET', '/knowledge-sources')).status, 401);
  });

  t.test('every change is audited', async (t) => {
    const rows = await query<{ action: string }>(
      host.databaseUrl,
      "SELECT DISTINCT action FROM admin_action_audits WHERE source = 'core.knowledge' ORDER BY action",
    );
    t.same(
      rows.map((r) => r.action),
      ['knowledge_mount.create', 'knowledge_mount.delete', 'knowledge_source.create', 'knowledge_source.update'],
    );
  });
});
