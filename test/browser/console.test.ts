// The web console in Debian's Chromium against a test host: logging in, the dashboard, listing and creating agents
// with the host's 422 shown beside the field, a session that renews itself or, when it cannot, returns to the login
// page where the user was, and what a sub-administrator may not do hidden or explained. Every page passes axe-core
// with no serious or critical violation, and each leaves a screenshot in test/browser/screenshots.
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import type { BrowserContext, Page } from 'playwright-core';
import t from 'tap';
import { createSubAdmin } from '../helpers/admins.js';
import { accessibilityViolations, launchBrowser, screenshot } from '../helpers/browser.js';
import { AdminClient, BOOTSTRAP_ADMIN, startTestHost } from '../helpers/host.js';
import { WsClient } from '../helpers/ws.js';
import { lastUserText, startOpenAiFixture } from '../fixtures/openai-server.js';

type Test = Parameters<Parameters<typeof t.test>[1]>[0];

// The playground's model: an OpenAI-compatible fixture that streams a reply a word at a time, 40 ms apart, so
// the console can be seen to render tokens as they come.
const model = await startOpenAiFixture({
  respond: (body) => ({ chunks: ['Refunds ', 'are ', 'issued ', 'within ', '14 ', 'days', ` (${lastUserText(body).length}).`], chunkDelayMs: 40 }),
});
t.teardown(() => model.close());
const host = await startTestHost(t, { env: { 'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': `"${model.url}"`, DEMO_GATEWAY_ENABLED: 'true' } });
const browser = await launchBrowser(t);
const root = new AdminClient(host.url);
await root.login();

async function newPage(t: Test): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ baseURL: host.url });
  t.teardown(() => context.close());
  return { context, page: await context.newPage() };
}

async function logIn(page: Page, username: string, password: string) {
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
}

async function checkAccessibility(t: Test, page: Page, what: string) {
  t.same(await accessibilityViolations(page), [], `${what}: no serious or critical accessibility violation`);
}

t.test('the host serves the console: pages fall back to index.html under a strict policy, assets are cached and gzipped', async (t) => {
  const page = await fetch(`${host.url}/console/agents/new`, { headers: { 'accept-encoding': 'identity' } });
  t.equal(page.status, 200);
  t.match(page.headers.get('content-type'), /^text\/html/);
  t.match(page.headers.get('content-security-policy'), /script-src 'self';/, 'no inline script may run');
  t.equal(page.headers.get('cache-control'), 'no-cache');
  const html = await page.text();
  const script = html.match(/src="(\/console\/assets\/[^"]+\.js)"/)?.[1];
  t.ok(script, 'index.html names its bundle');
  const asset = await fetch(host.url + script!, { headers: { 'accept-encoding': 'gzip' } });
  t.equal(asset.status, 200);
  t.equal(asset.headers.get('cache-control'), 'public, max-age=31536000, immutable', 'content-hashed, so cached for good');
  t.equal(asset.headers.get('content-encoding'), 'gzip');
  const raw = await fetch(host.url + script!, { headers: { 'accept-encoding': 'identity' } });
  const plain = Buffer.from(await raw.arrayBuffer());
  t.equal(raw.headers.get('content-encoding'), null, 'plain for a client that does not take gzip');
  t.ok(plain.length > 0, 'the bundle has content');
  // fetch inflates gzip itself, so the compressed form is checked by asking node's http for it.
  const { request } = await import('node:http');
  const compressed = await new Promise<Buffer>((resolve, reject) => {
    request(host.url + script!, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(Buffer.concat(chunks)));
    })
      .on('error', reject)
      .end();
  });
  t.ok(compressed.length < plain.length / 2, `gzipped ${compressed.length} bytes of ${plain.length}`);
  t.same(gunzipSync(compressed), plain, 'the same bundle');
  t.equal((await fetch(`${host.url}/console/assets/missing.js`)).status, 404, 'a missing asset is a 404, not the page');
  t.equal((await fetch(`${host.url}/console/..%2F..%2Fpackage.json`)).headers.get('content-type'), 'text/html; charset=utf-8', 'no path leaves the build');
});

t.test('an administrator logs in, sees the dashboard, and creates an agent with the refusal shown beside its field', async (t) => {
  const { page } = await newPage(t);
  await page.goto('/console');
  await page.getByRole('heading', { name: 'agent-host console' }).waitFor();
  await checkAccessibility(t, page, 'login');
  await screenshot(page, 'login');

  await logIn(page, BOOTSTRAP_ADMIN.username, 'not the password');
  t.match(await page.getByRole('alert').textContent(), /Could not log in:/, 'a refused login says so');
  await logIn(page, BOOTSTRAP_ADMIN.username, BOOTSTRAP_ADMIN.password);
  await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
  await page.getByText(/^Guard (ok|warning|failed)$/).waitFor();
  t.match(await page.locator('section', { hasText: 'Release' }).textContent(), /app env\s*test/, 'the release metadata of this host');
  await checkAccessibility(t, page, 'dashboard');
  await screenshot(page, 'dashboard');

  await page.getByRole('link', { name: 'Agents' }).click();
  await page.getByText('No agents yet.').waitFor();
  await page.getByRole('link', { name: 'New agent' }).click();
  await page.getByLabel('Description').fill('Answers questions about orders');
  await page.getByRole('button', { name: 'Create agent' }).click();
  const nameError = page.locator('#agent-name-error');
  await nameError.waitFor();
  t.ok(await nameError.textContent(), `the host's refusal of the empty name is beside it: ${await nameError.textContent()}`);
  t.equal(await page.getByLabel('Name', { exact: true }).getAttribute('aria-invalid'), 'true', 'the field is marked invalid');
  t.equal(await page.getByLabel('Description').inputValue(), 'Answers questions about orders', 'nothing typed is lost');
  await checkAccessibility(t, page, 'new agent with an error');
  await screenshot(page, 'agent-create-error');

  await page.getByLabel('Name', { exact: true }).fill('Order helper');
  await page.getByRole('button', { name: 'Create agent' }).click();
  await page.getByRole('cell', { name: 'Order helper' }).waitFor();
  t.equal(new URL(page.url()).pathname, '/console/agents', 'back on the list');
  const listed = await root.request('GET', '/agents');
  t.same(
    listed.body.items.map((a: { name: string; description: string }) => [a.name, a.description]),
    [['Order helper', 'Answers questions about orders']],
    'the host has the agent as typed',
  );
  await checkAccessibility(t, page, 'agents');
  await screenshot(page, 'agents');
});

t.test('an expired access cookie is renewed unseen; a session that cannot be renewed asks for a login over the page, losing nothing', async (t) => {
  const { context, page } = await newPage(t);
  await page.goto('/console/agents');
  await logIn(page, BOOTSTRAP_ADMIN.username, BOOTSTRAP_ADMIN.password);
  await page.getByRole('heading', { name: 'Agents' }).waitFor();

  await context.clearCookies({ name: 'agent_host_access' });
  await page.reload();
  await page.getByRole('heading', { name: 'Agents' }).waitFor();
  t.ok(
    (await context.cookies()).some((c) => c.name === 'agent_host_access'),
    'a new access cookie was issued by the refresh',
  );

  await page.getByRole('link', { name: 'New agent' }).click();
  await page.getByLabel('Name', { exact: true }).fill('Typed before the session ended');
  await context.clearCookies();
  await page.getByRole('button', { name: 'Create agent' }).click();
  const dialog = page.getByRole('dialog', { name: 'Your session ended' });
  await dialog.waitFor();
  await checkAccessibility(t, page, 'session ended');
  await screenshot(page, 'session-ended');
  await dialog.getByLabel('Username').fill(BOOTSTRAP_ADMIN.username);
  await dialog.getByLabel('Password').fill(BOOTSTRAP_ADMIN.password);
  await dialog.getByRole('button', { name: 'Log in' }).click();
  await dialog.waitFor({ state: 'hidden' });
  t.equal(await page.getByLabel('Name', { exact: true }).inputValue(), 'Typed before the session ended', 'the form is as the user left it');
  await page.getByRole('button', { name: 'Create agent' }).click();
  await page.getByRole('cell', { name: 'Typed before the session ended' }).waitFor();
  t.pass('sent again, the save goes through');

  await page.getByRole('button', { name: 'Log out' }).click();
  await page.getByRole('button', { name: 'Log in' }).waitFor();
  t.same(
    (await context.cookies()).filter((c) => c.name.startsWith('agent_host_')),
    [],
    'logging out clears the cookies',
  );
});

t.test('a sub-administrator does not see what they may not do, and a page they open anyway says which permission is missing', async (t) => {
  const reader = await createSubAdmin(root, 'agent-reader', ['agents.read']);
  const { page } = await newPage(t);
  await page.goto('/console/agents');
  await logIn(page, reader.username, `${reader.username}-password-1`);
  await page.getByRole('cell', { name: 'Typed before the session ended' }).waitFor();
  t.equal(await page.getByRole('link', { name: 'New agent' }).count(), 0, 'no create button without agents.write');
  t.notOk(await page.locator('section', { hasText: 'Release' }).count(), 'no release metadata without dashboard.read');

  const outsider = await createSubAdmin(root, 'outsider', ['dashboard.read']);
  const other = await newPage(t);
  await other.page.goto('/console/agents');
  await logIn(other.page, outsider.username, `${outsider.username}-password-1`);
  const alert = other.page.getByRole('alert');
  await alert.waitFor();
  t.match(await alert.textContent(), /Could not list the agents:.*agents\.read/, 'the refusal names the permission');
  t.equal(await other.page.getByRole('link', { name: 'Agents' }).count(), 0, 'no Agents link without agents.read');
  await checkAccessibility(t, other.page, 'agents refused');
});

t.test('the playground streams a reply token by token, goes on in the same session, and inspects the turn', async (t) => {
  const agent = (await root.request('POST', '/agents', { name: 'Refund desk', agent_type: 'chat', model_provider: 'openai', model_name: 'gpt-4o-mini' })).body;
  const { page } = await newPage(t);
  await page.goto(`/console/playground?agent=${agent.agent_id}`);
  await logIn(page, BOOTSTRAP_ADMIN.username, BOOTSTRAP_ADMIN.password);
  await page.getByRole('heading', { name: 'Playground' }).waitFor();
  t.equal(await page.getByLabel('Agent').inputValue(), agent.agent_id, 'the agent of the address is chosen');

  // Count the changes to the reply's text as they are painted: one per streamed token, not one at the end.
  await page.evaluate(() => {
    const w = window as unknown as { replyTexts: string[] };
    w.replyTexts = [];
    new MutationObserver(() => {
      const last = document.querySelector('.message.assistant:last-child p');
      if (last?.textContent && last.textContent !== w.replyTexts.at(-1)) w.replyTexts.push(last.textContent);
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
  await page.getByLabel('Message').fill('When are refunds issued?');
  await page.getByRole('button', { name: 'Send' }).click();
  const reply = page.locator('.message.assistant p').first();
  await page.getByRole('button', { name: 'Inspect' }).waitFor();
  t.equal(await reply.textContent(), 'Refunds are issued within 14 days (24).', 'the reply, whole');
  const texts = await page.evaluate(() => (window as unknown as { replyTexts: string[] }).replyTexts);
  t.ok(texts.length >= 5, `the reply was shown in ${texts.length} steps as its 7 tokens came`);
  t.ok(
    texts.every((text, i) => i === 0 || text.startsWith(texts[i - 1]!)),
    'each step adds to the one before',
  );

  const inspector = page.getByRole('region', { name: 'Turn inspector' });
  await inspector.getByText('completed').waitFor();
  t.match(await inspector.textContent(), /openai gpt-4o-mini/, 'the model that answered');
  t.match(await inspector.getByRole('table', { name: 'Routing decisions' }).textContent(), /final/, "routing's decision for the final stage");
  t.match(await inspector.textContent(), /No retrieved chunks\./, 'no knowledge is mounted, so no chunk');
  await checkAccessibility(t, page, 'playground');
  await screenshot(page, 'playground');

  const session = (await page.getByText(/^Session /).textContent())!.slice('Session '.length);
  await page.getByLabel('Message').fill('And how are they paid?');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.getByRole('button', { name: 'Inspect' }).nth(1).waitFor();
  const turns = await root.request('GET', `/sessions/${session}/turns`);
  t.equal(turns.body.items.length, 2, 'the second message went on in the same session');

  await page.getByRole('button', { name: 'New conversation' }).click();
  t.equal(await page.locator('.message').count(), 0, 'a new conversation starts empty');
  t.equal(await page.getByText(/^Session /).count(), 0, 'and with no session');
});

t.test('a turn the host refuses shows its reason and gives the message back', async (t) => {
  const agent = (await root.request('POST', '/agents', { name: 'Closed desk', agent_type: 'chat', status: 'inactive' })).body;
  const { page } = await newPage(t);
  await page.goto(`/console/playground?agent=${agent.agent_id}`);
  await logIn(page, BOOTSTRAP_ADMIN.username, BOOTSTRAP_ADMIN.password);
  await page.getByLabel('Message').fill('Anyone there?');
  await page.getByRole('button', { name: 'Send' }).click();
  const alert = page.getByRole('alert');
  await alert.waitFor();
  t.match(await alert.textContent(), /Could not get a reply:.*AGENT_INACTIVE/, 'the refusal in words, with its code');
  t.equal(await page.getByLabel('Message').inputValue(), 'Anyone there?', 'the message is back in the box');
});

t.test('an operator watches a live session, takes it over while the customer writes, replies, and a second operator takes it from them', async (t) => {
  const agent = (
    await root.request('POST', '/agents', {
      name: 'Support',
      agent_type: 'chat',
      public_access_mode: 'public_anonymous',
      human_takeover_enabled: true,
      model_provider: 'openai',
      model_name: 'gpt-4o-mini',
    })
  ).body;
  const sessionId = (await fetch(`${host.url}/public/agents/${agent.agent_id}/sessions`, { method: 'POST' }).then((r) => r.json())).session_id;
  const customer = await WsClient.connect(host.url, `/public/ws/${encodeURIComponent(sessionId)}`);
  t.teardown(() => customer.close());
  t.same(await customer.send('user_message', { content: 'Where is my parcel?' }), { ok: true });
  await customer.waitFor('message', (p) => p.message.role === 'assistant');

  const first = await newPage(t);
  await first.page.goto('/console/sessions');
  await logIn(first.page, BOOTSTRAP_ADMIN.username, BOOTSTRAP_ADMIN.password);
  await first.page.getByRole('combobox', { name: 'Agent' }).selectOption({ label: 'Support' });
  await first.page.getByRole('link', { name: sessionId }).click();
  const transcript = first.page.getByRole('list', { name: 'Transcript' });
  await transcript.getByText('Where is my parcel?').waitFor();
  await transcript.getByText(/^Refunds are issued/).waitFor();
  await first.page.getByText('Live').waitFor();

  await first.page.getByRole('button', { name: 'Take over' }).click();
  await first.page.getByText('Taken over by you').waitFor();
  await customer.waitFor('session', (p) => p.status === 'HUMAN_ACTIVE');
  t.same(await customer.send('user_message', { content: 'Hello? Anyone?' }), { ok: true });
  await transcript.getByText('Hello? Anyone?').waitFor();
  t.pass("the customer's message arrives live while the session is taken over");

  await first.page.getByLabel('Your reply').fill('Hi, this is Root. Let me check.');
  await first.page.getByRole('button', { name: 'Send reply' }).click();
  const human = await customer.waitFor('message', (p) => p.message.role === 'agent');
  t.equal(human.message.content, 'Hi, this is Root. Let me check.', 'the customer gets the human reply');
  await transcript.getByText('Hi, this is Root. Let me check.').waitFor();
  t.equal(customer.of('message').filter((p) => p.message.role === 'assistant').length, 1, 'the AI did not answer while a person had the session');
  await checkAccessibility(t, first.page, 'session');
  await screenshot(first.page, 'session');

  const operator = await createSubAdmin(root, 'second-operator', ['conversations.read', 'conversations.write', 'agents.read']);
  const second = await newPage(t);
  await second.page.goto(`/console/sessions/${encodeURIComponent(sessionId)}`);
  await logIn(second.page, operator.username, `${operator.username}-password-1`);
  await second.page.getByText(`Taken over by ${BOOTSTRAP_ADMIN.username}`).waitFor();
  await second.page.getByRole('list', { name: 'Transcript' }).getByText('Hi, this is Root. Let me check.').waitFor();
  await second.page.getByRole('button', { name: 'Take over from them' }).click();
  await second.page.getByText('Taken over by you').waitFor();
  await first.page.getByText(`Taken over by ${operator.username}`).waitFor();
  t.equal(await first.page.getByLabel('Your reply').count(), 0, 'the first operator can no longer reply');
  await first.page.getByRole('cell', { name: 'force takeover' }).waitFor();
  t.pass('the force takeover is in the first operator’s event list, live');

  await second.page.getByRole('button', { name: 'Hand back to the AI' }).click();
  await first.page.getByText('The AI answers').waitFor();
  await customer.waitFor('session', (p) => p.status === 'AI_ACTIVE');
  t.pass('handed back, every watcher sees it');
});

t.test('the agents list shows 50 at a time and the rest on request', async (t) => {
  const before = (await root.request('GET', '/agents?limit=100')).body.items.length;
  for (let i = 0; i < 50; i++) await root.request('POST', '/agents', { name: `Bulk agent ${String(i).padStart(2, '0')}`, agent_type: 'chat' });
  const { page } = await newPage(t);
  await page.goto('/console/agents');
  await logIn(page, BOOTSTRAP_ADMIN.username, BOOTSTRAP_ADMIN.password);
  const rows = page.locator('tbody tr');
  await rows.first().waitFor();
  t.equal(await rows.count(), 50, 'the first page');
  await page.getByRole('button', { name: 'Show more' }).click();
  await page.waitForFunction((total) => document.querySelectorAll('tbody tr').length === total, before + 50);
  t.equal(await page.getByRole('button', { name: 'Show more' }).count(), 0, 'nothing more to show');
  await page.getByRole('link', { name: 'Bulk agent 49' }).click();
  await page.getByRole('heading', { name: 'Bulk agent 49' }).waitFor();
  t.pass("a name in the list opens the agent's page");
});

t.test('administrators are made and granted permissions with the password asked again, and the audit log shows it', async (t) => {
  const { page } = await newPage(t);
  await page.goto('/console/admin-users');
  await logIn(page, BOOTSTRAP_ADMIN.username, BOOTSTRAP_ADMIN.password);
  await page.getByRole('link', { name: BOOTSTRAP_ADMIN.username }).waitFor();

  const form = page.getByRole('form', { name: 'New administrator' });
  await form.getByLabel('Username').fill('console-made');
  await form.getByLabel(/^Password/).fill('console made password 1');
  await form.getByRole('checkbox', { name: 'agents.read' }).check();
  await form.getByRole('button', { name: 'Create administrator' }).click();
  const dialog = page.getByRole('dialog', { name: 'Confirm with your password' });
  await dialog.waitFor();
  await checkAccessibility(t, page, 'challenge');
  await dialog.getByLabel('Password').fill('not my password');
  await dialog.getByRole('button', { name: 'Confirm' }).click();
  await dialog.getByRole('alert').waitFor();
  t.match(await dialog.getByRole('alert').textContent(), /Could not confirm:/, 'a wrong password is refused in the dialog');
  await dialog.getByLabel('Password').fill(BOOTSTRAP_ADMIN.password);
  await dialog.getByRole('button', { name: 'Confirm' }).click();
  await page.getByRole('link', { name: 'console-made' }).waitFor();
  const made = (await root.request('GET', '/admin/admin-users?limit=100')).body.items.find((u: { username: string }) => u.username === 'console-made');
  t.same(
    made.grants.map((g: { permission_code: string }) => g.permission_code),
    ['agents.read'],
    'created with the permission checked',
  );
  await checkAccessibility(t, page, 'administrators');
  await screenshot(page, 'administrators');

  await page.getByRole('link', { name: 'console-made' }).click();
  await page.getByRole('cell', { name: 'agents.read', exact: true }).waitFor();
  await page.getByRole('checkbox', { name: 'conversations.read' }).check();
  await page.getByRole('button', { name: 'Grant' }).click();
  await dialog.getByLabel('Password').fill(BOOTSTRAP_ADMIN.password);
  await dialog.getByRole('button', { name: 'Confirm' }).click();
  await page.getByRole('cell', { name: 'conversations.read', exact: true }).waitFor();
  t.pass('granted after the challenge');

  await page.getByRole('button', { name: 'Revoke agents.read' }).click();
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  t.match(
    await page.getByRole('alert').textContent(),
    /Could not revoke the permission: the password was not confirmed/,
    'a cancelled challenge changes nothing and says so',
  );
  t.equal(await page.getByRole('cell', { name: 'agents.read', exact: true }).count(), 1, 'the grant is still there');

  await page.getByRole('link', { name: 'Audit log' }).click();
  await page.getByLabel('Action').fill('admin_permission.*');
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.getByRole('cell', { name: 'admin_permission.grant' }).first().waitFor();
  t.equal(await page.getByRole('cell', { name: 'admin_user.create' }).count(), 0, 'only the actions asked for');
  await checkAccessibility(t, page, 'audit log');
  await screenshot(page, 'audit-log');
});

t.test('an agent is edited field group by field group, refused values shown beside their fields, versioned, compared, rolled back and published', async (t) => {
  const agent = (await root.request('POST', '/agents', { name: 'Editable', agent_type: 'chat', system_prompt: 'Be brief.' })).body;
  const { page } = await newPage(t);
  await page.goto(`/console/agents/${agent.agent_id}`);
  await logIn(page, BOOTSTRAP_ADMIN.username, BOOTSTRAP_ADMIN.password);
  const form = page.getByRole('form', { name: 'Agent settings' });
  await form.getByLabel('System prompt').waitFor();
  t.equal(await form.getByLabel('System prompt').inputValue(), 'Be brief.', 'the stored value');

  await form.getByLabel('Routing (JSON)').fill('{"enabled": tru');
  await form.getByLabel('Temperature').fill('5');
  await form.getByRole('button', { name: 'Save changes' }).click();
  t.match(await page.locator('#field-model_routing_config-error').textContent(), /not valid JSON/, 'JSON that does not parse is caught before sending');
  t.equal((await root.request('GET', `/agents/${agent.agent_id}`)).body.model_temperature, null, 'and nothing was sent');

  await form.getByLabel('Routing (JSON)').fill('');
  await form.getByRole('button', { name: 'Save changes' }).click();
  await page.locator('#field-model_temperature-error').waitFor();
  t.ok(
    await page.locator('#field-model_temperature-error').textContent(),
    `the host's refusal beside the temperature: ${await page.locator('#field-model_temperature-error').textContent()}`,
  );
  t.equal(await form.getByLabel('Temperature').inputValue(), '5', 'the refused value is still there to fix');
  await checkAccessibility(t, page, 'agent with errors');

  await form.getByLabel('Temperature').fill('0.5');
  await form.getByLabel('Total requests').fill('1000');
  await form.getByRole('button', { name: 'Save changes' }).click();
  await page.getByText('Saved.').waitFor();
  t.match(
    (await root.request('GET', `/agents/${agent.agent_id}`)).body,
    { model_temperature: 0.5, max_total_requests: 1000, system_prompt: 'Be brief.' },
    'saved as typed',
  );

  await page.getByLabel('Note').fill('before the rename');
  await page.getByRole('button', { name: 'Save as version' }).click();
  await page.getByRole('cell', { name: 'before the rename' }).waitFor();
  await form.getByLabel('Name', { exact: true }).fill('Renamed');
  await form.getByRole('button', { name: 'Save changes' }).click();
  await page.getByRole('heading', { name: 'Renamed' }).waitFor();
  await page.getByRole('button', { name: 'Compare 1' }).click();
  const diff = page.getByRole('heading', { name: 'Version 1 against the live configuration' });
  await diff.waitFor();
  t.match(
    await page.locator('section[aria-labelledby="versions-heading"] table').last().textContent(),
    /NameEditableRenamed/,
    'the diff shows the name, then and now',
  );
  await checkAccessibility(t, page, 'agent');
  await screenshot(page, 'agent');

  await page.getByRole('button', { name: 'Roll back to 1' }).click();
  await page.getByRole('heading', { name: 'Editable' }).waitFor();
  t.equal(await form.getByLabel('Name', { exact: true }).inputValue(), 'Editable', 'the form shows the restored configuration');
  t.equal(await page.getByRole('button', { name: 'Publish' }).count(), 0, 'a chat agent runs live, so it has no Publish');

  const fusion = (
    await root.request('POST', '/agents', {
      name: 'Invoice fields',
      agent_type: 'fusion',
      fusion_definition: { instructions: 'Extract.', input_slots: [{ name: 'text', kind: 'text' }], output_slots: [{ name: 'summary', kind: 'text' }] },
    })
  ).body;
  await page.goto(`/console/agents/${fusion.agent_id}`);
  await page.getByText('Published version: none').waitFor();
  await page.getByRole('button', { name: 'Publish' }).click();
  await page.getByText(/^Published version: \d+$/).waitFor();
  t.ok((await root.request('GET', `/agents/${fusion.agent_id}`)).body.published_agent_version_id, 'a fusion agent is published');
});

t.test('knowledge: a source is made, documents uploaded with progress, indexed by a job followed live, and checked', async (t) => {
  const { page } = await newPage(t);
  await page.goto('/console/knowledge');
  await logIn(page, BOOTSTRAP_ADMIN.username, BOOTSTRAP_ADMIN.password);
  await page.getByText('No knowledge source yet.').waitFor();
  const form = page.getByRole('form', { name: 'New source' });
  await form.getByLabel('Name').fill('Handbook');
  await form.getByRole('button', { name: 'Create source' }).click();
  await page.getByRole('link', { name: 'Handbook' }).click();
  await page.getByRole('heading', { name: 'Handbook' }).waitFor();

  const handbook = Array.from({ length: 40 }, (_, i) => `Section ${i}. Items can be returned within 30 days of delivery, in their original packaging.`).join(
    '\n\n',
  );
  await page.getByLabel('Documents to add').setInputFiles([
    { name: 'handbook.md', mimeType: 'text/markdown', buffer: Buffer.from(`# Returns\n\n${handbook}\n`) },
    { name: 'tool.exe', mimeType: 'application/octet-stream', buffer: Buffer.from([0x4d, 0x5a, 0x90, 0x00, 0x03, 0x00, 0x00, 0x00, 0x04, 0x00]) },
  ]);
  await page.locator('.uploads li').filter({ hasText: 'handbook.md' }).filter({ hasText: 'uploaded' }).waitFor();
  t.equal(await page.getByRole('progressbar', { name: 'Upload of handbook.md' }).getAttribute('value'), '1', 'its progress bar is full');
  const refused = page.getByRole('alert').filter({ hasText: 'Could not upload tool.exe' });
  await refused.waitFor();
  t.pass(`a file the host refuses says why: ${await refused.textContent()}`);
  await page.getByRole('cell', { name: 'handbook.md' }).waitFor();

  await page.getByRole('button', { name: 'Index new documents' }).click();
  await page.getByRole('cell', { name: 'succeeded' }).waitFor();
  const row = page.getByRole('row', { name: /handbook\.md/ });
  await row.getByRole('cell', { name: 'indexed', exact: true }).first().waitFor();
  const cells = await row.getByRole('cell').allTextContents();
  const [actual, expected] = cells[3]!.split(' / ');
  t.ok(Number(actual) > 0 && actual === expected, `every chunk is in the vector store (${cells[3]})`);
  await page.getByRole('button', { name: 'Check vector health' }).click();
  await page.getByText(/^Vector health: /).waitFor();
  const preview = page.getByRole('form', { name: 'Chunking preview' });
  await preview.getByLabel('Strategy').selectOption('by_title');
  await preview.getByLabel(/^Parameters/).fill('{"max_characters": 10');
  await preview.getByRole('button', { name: 'Preview chunking' }).click();
  await preview.getByText(/not valid JSON/).waitFor();
  await preview.getByLabel(/^Parameters/).fill('{"max_characters": 400}');
  await preview.getByRole('button', { name: 'Preview chunking' }).click();
  const previewed = page.getByRole('table', { name: 'Chunking preview by document' }).getByRole('row', { name: /handbook\.md/ });
  await previewed.waitFor();
  t.match(await previewed.textContent(), /previewed/, "another chunking is tried on the source's document without changing it");
  const past = page.getByRole('table', { name: 'The last 20 checks and chunking previews' });
  await past.getByRole('cell', { name: 'chunking preview (by_title)' }).waitFor();
  t.same(
    (await past.getByRole('row').allTextContents()).slice(1).map((text) => /vector health|chunking preview/.exec(text)?.[0]),
    ['chunking preview', 'vector health'],
    'past checks list the preview and the health check, newest first',
  );
  await checkAccessibility(t, page, 'knowledge source');
  await screenshot(page, 'knowledge-source');

  // Mounted on a chat agent, the handbook is what the playground's inspector shows retrieval handing on.
  const agent = (await root.request('POST', '/agents', { name: 'Returns desk', agent_type: 'chat', model_provider: 'openai', model_name: 'gpt-4o-mini' })).body;
  await page.goto(`/console/agents/${agent.agent_id}`);
  await page.getByText('No knowledge source mounted.').waitFor();
  await page.getByLabel('Source', { exact: true }).selectOption({ label: 'Handbook' });
  await page.getByRole('button', { name: 'Mount', exact: true }).click();
  await page.getByRole('button', { name: 'Unmount Handbook' }).waitFor();
  await page.goto(`/console/playground?agent=${agent.agent_id}`);
  await page.getByLabel('Message').fill('Within how many days can items be returned?');
  await page.getByRole('button', { name: 'Send' }).click();
  const chunks = page.getByRole('table', { name: 'Retrieved chunks' });
  await chunks.waitFor();
  t.match(await chunks.textContent(), /handbook\.md.*returned within 30 days/s, 'the inspector shows the chunk and its source file');
  await screenshot(page, 'playground-retrieval');
});

t.test('tools: an MCP server is registered, checked and called from the test-call console; a credential keeps its secret', async (t) => {
  const { page } = await newPage(t);
  await page.goto('/console/tools');
  await logIn(page, BOOTSTRAP_ADMIN.username, BOOTSTRAP_ADMIN.password);
  await page.getByText('No MCP server registered yet.').waitFor();

  const credential = page.getByRole('form', { name: 'New credential' });
  await credential.getByLabel('Name', { exact: true }).fill('Tracking API');
  await credential.getByLabel('Secret name').fill('access_token');
  await credential.getByLabel('Value').fill('s3cr3t-token-value');
  await credential.getByRole('button', { name: 'Store credential' }).click();
  await page.getByRole('cell', { name: 'Tracking API', exact: true }).waitFor();
  t.equal(await page.getByRole('cell', { name: 'access_token' }).count(), 1, 'the secret is listed by name');
  t.notMatch(await page.content(), /s3cr3t-token-value/, 'and its value is nowhere on the page once stored');

  const everything = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');
  const server = page.getByRole('form', { name: 'New MCP server' });
  await server.getByLabel('Name', { exact: true }).fill('Everything');
  await server.getByLabel('Connection (JSON)').fill('{"command": "node", "args": [');
  await server.getByRole('button', { name: 'Register server' }).click();
  t.match(await server.locator('#server-config-error').textContent(), /not valid JSON/, 'a config that does not parse is caught before sending');
  await server.getByLabel('Connection (JSON)').fill(JSON.stringify({ command: process.execPath, args: [everything, 'stdio'] }));
  await server.getByRole('button', { name: 'Register server' }).click();
  await page.getByRole('link', { name: 'Everything' }).click();

  await page.getByRole('button', { name: 'Check health' }).click();
  await page.getByText(/^Healthy: active/).waitFor();
  await page.getByRole('button', { name: 'Call', exact: true }).click();
  const result = page.getByRole('status', { name: 'Test call result' });
  await result.getByRole('cell', { name: 'echo', exact: true }).waitFor();
  t.match(await result.textContent(), /tools\/list: success/, 'tools/list lists the tools');
  await page.getByLabel('Action').selectOption('tools/call');
  await page.getByLabel('Tool').fill('echo');
  await page.getByLabel('Arguments (JSON)').fill('{"message": "hello console"}');
  await page.getByRole('button', { name: 'Call', exact: true }).click();
  await result.getByText(/Echo: hello console/).waitFor();
  t.pass('tools/call shows the tool result');
  await checkAccessibility(t, page, 'tool server');
  await screenshot(page, 'tool-server');

  // The README's walkthrough, in the console: mount the server on a chat agent, add a quick-match rule, and ask.
  const serverId = new URL(page.url()).pathname.split('/').at(-1)!;
  const agent = (await root.request('POST', '/agents', { name: 'Echo desk', agent_type: 'chat' })).body;
  await page.goto(`/console/agents/${agent.agent_id}`);
  const mountForm = page.getByRole('form', { name: 'Mount an MCP server' });
  await mountForm.getByLabel('Server').selectOption({ label: 'Everything' });
  await mountForm.getByLabel(/^Allowed tools/).fill('echo');
  await mountForm.getByRole('button', { name: 'Mount server' }).click();
  await page.getByRole('button', { name: 'Unmount Everything' }).waitFor();
  const rules = { quick_match_rules: [{ prefix: '/echo', mcp_server_id: serverId, tool_name: 'echo', suffix_parameter_name: 'message' }] };
  await page.getByLabel('Tool responses (JSON)').fill(JSON.stringify(rules));
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByText('Saved.').waitFor();
  await page.goto(`/console/playground?agent=${agent.agent_id}`);
  await page.getByLabel('Message').fill('/echo hello tools');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.locator('.message.assistant p').filter({ hasText: 'Echo: hello tools' }).waitFor();
  const calls = page.getByRole('table', { name: 'MCP calls' });
  await calls.waitFor();
  t.match(await calls.textContent(), /Everything.*echo.*success/s, 'the inspector shows the MCP call and its status');

  await page.goto(`/console/agents/${agent.agent_id}`);
  const audited = page.getByRole('table', { name: 'MCP calls' }).getByRole('row', { name: /echo/ });
  await audited.waitFor();
  t.match(await audited.textContent(), /Everything.*echo.*success/, "the agent's page audits the call");

  await page.goto('/console/tools');
  const credentialRow = page.getByRole('row', { name: /Tracking API/ });
  t.equal(await credentialRow.locator('time').count(), 0, 'never rotated');
  await page.getByRole('button', { name: 'Rotate Tracking API' }).click();
  const rotate = page.getByRole('form', { name: 'Rotate Tracking API' });
  t.equal(await rotate.getByLabel('Secret name').inputValue(), 'access_token', 'the rotation starts from the secret names');
  await rotate.getByLabel('Value').fill('n3w-token-value');
  await rotate.getByRole('button', { name: 'Rotate', exact: true }).click();
  await credentialRow.locator('time').waitFor();
  t.notMatch(await page.content(), /n3w-token-value/, 'rotated, and the new value is nowhere on the page');
});

t.test('scheduled tasks: one asked for in the playground is listed with its schedule, and cancelled keeping its history', async (t) => {
  const agent = (await root.request('POST', '/agents', { name: 'Reminder desk', agent_type: 'chat' })).body;
  const { page } = await newPage(t);
  await page.goto(`/console/playground?agent=${agent.agent_id}`);
  await logIn(page, BOOTSTRAP_ADMIN.username, BOOTSTRAP_ADMIN.password);
  await page.getByLabel('Message').fill('Remind me every weekday at 9:00 to read the overnight tickets');
  await page.getByRole('button', { name: 'Send' }).click();
  await page
    .locator('.message.assistant p')
    .filter({ hasText: /^Scheduled/ })
    .waitFor();

  await page.getByRole('link', { name: 'Scheduled' }).click();
  const row = page.getByRole('row', { name: /read the overnight tickets/ });
  await row.waitFor();
  t.match(await row.textContent(), /cron.*active/, 'the task, its schedule kind and status');
  await row.getByRole('button', { name: 'Runs' }).click();
  await page.getByRole('region', { name: 'Runs of the task' }).getByText('No run yet.').waitFor();
  await checkAccessibility(t, page, 'scheduled tasks');
  await screenshot(page, 'scheduled-tasks');
  await row.getByRole('button', { name: 'Cancel' }).click();
  await row.getByRole('cell', { name: 'cancelled' }).waitFor();
  const task = (await root.request('GET', `/scheduled-tasks?agent_id=${agent.agent_id}`)).body.items[0];
  t.equal(task.status, 'cancelled', 'the host has it cancelled');
  await page.getByLabel('Status').selectOption('active');
  await page.getByText('No scheduled task matches.').waitFor();
  t.pass('the status filter leaves it out');
});

t.test('ETL: an etl agent maps an uploaded CSV onto a target schema, followed to its end, with its files to download', async (t) => {
  const agent = (await root.request('POST', '/agents', { name: 'Customer import', agent_type: 'etl' })).body;
  const { page } = await newPage(t);
  await page.goto(`/console/agents/${agent.agent_id}`);
  await logIn(page, BOOTSTRAP_ADMIN.username, BOOTSTRAP_ADMIN.password);
  await page.getByText('No ETL job yet.').waitFor();
  const examples = new URL('../../examples/', import.meta.url);
  await page.getByLabel('Source CSV').setInputFiles(fileURLToPath(new URL('customers.csv', examples)));
  await page.getByLabel('Target schema CSV').setInputFiles(fileURLToPath(new URL('customers-schema.csv', examples)));
  await page.getByRole('button', { name: 'Start job' }).click();
  const row = page.getByRole('row', { name: /customers\.csv/ });
  await row.getByRole('cell', { name: /^succeeded/ }).waitFor();
  t.match(await row.textContent(), /4 of 4.*3 written, 1 rejected, 3 cells coerced/, 'the rows and the report counts');
  const output = await row.getByRole('link', { name: 'Output' }).getAttribute('href');
  const downloaded = await page.evaluate(async (href) => (await fetch(href!)).text(), output);
  t.match(downloaded, /^name,email,signup_date\r?\n/, 'the output has exactly the target columns');
  await checkAccessibility(t, page, 'etl agent');
  await screenshot(page, 'etl');
});

t.test('evaluation: a CSV imported (a bad one refused by row and column), frozen, run twice around a prompt change, gated and compared', async (t) => {
  // The offline model answers with the system prompt's passage that shares the question's words, so a prompt that
  // holds the answers makes the second run better than the first: the change this page exists to show.
  const agent = (await root.request('POST', '/agents', { name: 'Support desk', agent_type: 'chat' })).body;
  const { page } = await newPage(t);
  const runToTheEnd = async () => {
    await page.getByLabel('Agent', { exact: true }).selectOption({ label: 'Support desk' });
    await page.getByRole('button', { name: 'Start run' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^completed/ })
      .waitFor();
  };
  await page.goto('/console/evaluation');
  await logIn(page, BOOTSTRAP_ADMIN.username, BOOTSTRAP_ADMIN.password);
  await page.getByText(/No dataset yet/).waitFor();
  await checkAccessibility(t, page, 'evaluation datasets');
  await page.getByLabel('Name').fill('Support questions');
  await page.getByRole('button', { name: 'Create dataset' }).click();
  await page.getByRole('heading', { name: 'Support questions' }).waitFor();

  await page.getByLabel('CSV file').setInputFiles({ name: 'bad.csv', mimeType: 'text/csv', buffer: Buffer.from('question,expected_answr\nWhy?,Because\n') });
  await page.getByText(/Could not import the CSV/).waitFor();
  t.match(await page.locator('.field-error').textContent(), /row 1, expected_answr/, 'the refused header is named by row and column');
  await page.getByLabel('CSV file').setInputFiles(fileURLToPath(new URL('../../examples/support-eval.csv', import.meta.url)));
  await page.getByRole('cell', { name: 'Within how many days can items be returned?' }).waitFor();
  t.match(await page.getByRole('link', { name: 'support-eval.csv' }).getAttribute('href'), /source-csv/, 'the source CSV can be downloaded');
  await screenshot(page, 'evaluation-dataset');

  await page.getByRole('button', { name: 'Freeze a snapshot' }).click();
  await page.getByText(/frozen snapshot · 4 items/).waitFor();
  await runToTheEnd();
  const firstRun = new URL(page.url()).pathname;
  t.match(await page.getByRole('table', { name: 'Domain' }).textContent(), /returns.*shipping/s, 'slices by domain');
  await page.getByLabel('Pass rate at least (0 to 1)').fill('0.5');
  await page.getByRole('button', { name: 'Evaluate gate' }).click();
  t.match(
    await page
      .getByRole('status')
      .filter({ hasText: /^Failed/ })
      .textContent(),
    /pass rate/i,
    'the gate fails the run and names the pass rate',
  );

  await root.request('PATCH', `/agents/${agent.agent_id}`, {
    system_prompt: 'Items can be returned within 30 days of delivery.\n\nExpress orders ship the same day when placed before 14:00.',
  });
  await page.getByRole('link', { name: 'its snapshot' }).click();
  await runToTheEnd();
  t.not(new URL(page.url()).pathname, firstRun, 'a second run');
  await page.getByLabel('Baseline run').selectOption({ index: 1 });
  const summary = page.getByRole('status').filter({ hasText: /improved/ });
  await summary.waitFor();
  t.match(await summary.textContent(), /^[1-9]\d* improved, 0 regressed/, 'the prompt change improved items and regressed none');
  t.match(await page.getByRole('region', { name: 'Compare' }).textContent(), /Within how many days.*improved/s, 'the improved item, side by side');
  const csv = await page.evaluate(
    async (href) => (await fetch(href!)).text(),
    await page.getByRole('link', { name: 'Download the results as CSV' }).getAttribute('href'),
  );
  t.match(csv, /^position,item_id,question/, 'the results download as CSV');
  await checkAccessibility(t, page, 'evaluation run');
  await screenshot(page, 'evaluation-run');
  await page.getByRole('link', { name: 'The agent' }).click();
  const runs = page.getByRole('region', { name: 'Evaluation runs' }).getByRole('row');
  await runs.nth(2).waitFor();
  t.equal(await runs.count(), 3, "the agent's page lists both runs");
});

t.test('the chat widget: the demo page chats through the demo gateway, a reload resumes the session, and another site embeds it', async (t) => {
  const agent = (
    await root.request('POST', '/agents', {
      name: 'Widget desk',
      agent_type: 'chat',
      public_access_mode: 'public_anonymous',
      model_provider: 'openai',
      model_name: 'gpt-4o-mini',
    })
  ).body;
  const { page } = await newPage(t);
  await page.goto(`/console/demo.html?agent_id=${agent.agent_id}`);
  const chat = page.getByRole('region', { name: 'Demo chat' });
  await chat.getByRole('button', { name: 'Send' }).and(page.locator(':enabled')).waitFor();
  await chat.getByLabel('Message').fill('When are refunds issued?');
  await chat.getByRole('button', { name: 'Send' }).click();
  await chat.locator('li.agent').filter({ hasText: 'Refunds are issued within 14 days (24).' }).waitFor();
  await checkAccessibility(t, page, 'widget demo page');
  await screenshot(page, 'widget-demo');

  await page.reload();
  await chat.getByRole('button', { name: 'Send' }).and(page.locator(':enabled')).waitFor();
  await chat.getByLabel('Message').fill('Thanks');
  await chat.getByRole('button', { name: 'Send' }).click();
  await chat.locator('li.agent').filter({ hasText: 'Refunds are issued within 14 days (6).' }).waitFor();
  // Send is enabled again at `done`, which comes once the turn is stored.
  await chat.getByRole('button', { name: 'Send' }).and(page.locator(':enabled')).waitFor();
  const sessions = (await root.request('GET', `/sessions?agent_id=${agent.agent_id}`)).body.items;
  t.equal(sessions.length, 1, 'after a reload the widget went on in the same session');
  t.equal((await root.request('GET', `/sessions/${sessions[0].session_id}/messages`)).body.items.length, 4, 'which holds both turns');

  // Another origin (another port) embeds the widget with one script tag.
  const site = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(
      `<!doctype html><html lang="en"><title>Shop</title><h1>A shop</h1><script src="${host.url}/console/widget.js" data-agent-id="${agent.agent_id}"></script></html>`,
    );
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  t.teardown(() => site.close());
  const shop = await (await browser.newContext()).newPage();
  t.teardown(() => shop.context().close());
  await shop.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/`);
  await shop.getByRole('button', { name: 'Chat' }).click();
  const embedded = shop.getByRole('region', { name: 'Chat with us' });
  await embedded.getByRole('button', { name: 'Send' }).and(shop.locator(':enabled')).waitFor();
  await embedded.getByLabel('Message').fill('Hello');
  await embedded.getByRole('button', { name: 'Send' }).click();
  await embedded.locator('li.agent').filter({ hasText: 'Refunds are issued within 14 days (5).' }).waitFor();
  t.pass('a page of another site chats with the agent through the widget');
});

t.test('Fusion: the draft run on typed inputs, a public API key made, shown once, used and revoked', async (t) => {
  const agent = (
    await root.request('POST', '/agents', {
      name: 'Invoice fields',
      agent_type: 'fusion',
      public_access_mode: 'public_api_key',
      fusion_definition: {
        instructions: 'Extract the invoice fields.',
        input_slots: [{ name: 'invoice_text', kind: 'text' }],
        output_slots: [
          {
            name: 'fields',
            kind: 'structured_json',
            structured_output_schema: { type: 'object', required: ['name', 'total'], properties: { name: { type: 'string' }, total: { type: 'number' } } },
          },
        ],
      },
    })
  ).body;
  await root.request('POST', `/agents/${agent.agent_id}/publish`, {});
  const { page } = await newPage(t);
  await page.goto(`/console/agents/${agent.agent_id}`);
  await logIn(page, BOOTSTRAP_ADMIN.username, BOOTSTRAP_ADMIN.password);
  const runs = page.getByRole('region', { name: 'Fusion runs' });
  await runs.getByText('No run yet.').waitFor();
  await page.getByRole('textbox', { name: 'invoice_text' }).fill('Invoice 17\nname: Acme Ltd\ntotal: 129.50');
  await page.getByRole('button', { name: 'Run', exact: true }).click();
  const row = runs.getByRole('row', { name: /succeeded/ });
  await row.waitFor();
  t.match(await row.textContent(), /admin.*invoice_text.*"name": "Acme Ltd".*"total": 129\.5/s, 'the run, its input slot and its structured output');

  const keys = page.getByRole('region', { name: 'Public API keys' });
  await keys.getByText('No API key yet.').waitFor();
  await page.getByLabel('Label').fill('billing');
  await page.getByRole('button', { name: 'Make key' }).click();
  const shown = await keys.getByRole('status').locator('code').textContent();
  t.ok(shown && shown.length > 20, 'the key is shown once');
  const call = (key: string) =>
    fetch(`${host.url}/public/agents/${agent.agent_id}/fusion-runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-agent-api-key': key },
      body: JSON.stringify({ inputs: { invoice_text: 'name: Beta GmbH\ntotal: 10' } }),
    });
  t.equal((await call(shown!)).status, 201, 'a system calls the published version with it');
  await page.reload();
  await runs.getByRole('row', { name: /API key/ }).waitFor();
  t.notOk((await page.content()).includes(shown!), 'after a reload the key appears nowhere on the page');
  await checkAccessibility(t, page, 'fusion agent');
  await screenshot(page, 'fusion');
  await keys.getByRole('button', { name: 'Revoke billing' }).click();
  await keys.getByRole('cell', { name: 'revoked' }).waitFor();
  t.equal((await call(shown!)).status, 401, 'the revoked key is refused');
});

t.test('system settings: a value that does not parse is caught, one the host refuses is shown, and a change needs the password', async (t) => {
  const before = (await root.request('GET', '/admin/system-settings')).body.items.find(
    (s: { config_key: string }) => s.config_key === 'agent.judge_prompt_max_length',
  );
  const { page } = await newPage(t);
  await page.goto('/console/system-settings');
  await logIn(page, BOOTSTRAP_ADMIN.username, BOOTSTRAP_ADMIN.password);
  const row = page.getByRole('row', { name: /agent\.judge_prompt_max_length/ });
  await row.waitFor();
  t.match(await row.textContent(), /configuration/, 'the value comes from the configuration');
  await row.getByRole('button', { name: 'Change agent.judge_prompt_max_length' }).click();
  const input = row.getByLabel('New value (JSON)');
  await input.fill('a lot');
  await row.getByRole('button', { name: 'Save' }).click();
  await row.getByText(/not valid JSON/).waitFor();
  t.pass('a value that is not JSON is caught before sending');
  await input.fill('-5');
  await row.getByRole('button', { name: 'Save' }).click();
  const dialog = page.getByRole('dialog', { name: 'Confirm with your password' });
  await dialog.getByLabel('Password').fill(BOOTSTRAP_ADMIN.password);
  await dialog.getByRole('button', { name: 'Confirm' }).click();
  t.match(
    await row.getByRole('alert').textContent(),
    /Could not change agent\.judge_prompt_max_length/,
    'the host refuses a negative length, shown in the row',
  );
  await input.fill(String(before.value + 1000));
  await row.getByRole('button', { name: 'Save' }).click();
  await dialog.getByLabel('Password').fill(BOOTSTRAP_ADMIN.password);
  await dialog.getByRole('button', { name: 'Confirm' }).click();
  await row.getByRole('cell', { name: 'changed here' }).waitFor();
  const after = (await root.request('GET', '/admin/system-settings')).body.items.find((s: { config_key: string }) => s.config_key === before.config_key);
  t.equal(after.value, before.value + 1000, 'the host has the new value');
  await checkAccessibility(t, page, 'system settings');
  await screenshot(page, 'system-settings');
});

t.test('skills: made, a draft version on the MCP server released, mounted on an agent, called by a turn and audited', async (t) => {
  const agent = (await root.request('POST', '/agents', { name: 'Echo desk', agent_type: 'chat' })).body;
  const { page } = await newPage(t);
  await page.goto('/console/skills');
  await logIn(page, BOOTSTRAP_ADMIN.username, BOOTSTRAP_ADMIN.password);
  await page.getByText('No skill yet.').waitFor();
  await page.getByLabel(/^Name/).fill('echo_back');
  await page.getByLabel('Description').fill('Repeats the request');
  await page.getByRole('button', { name: 'Create skill' }).click();
  await page.getByRole('heading', { name: 'echo_back' }).waitFor();
  const newVersion = page.getByRole('form', { name: 'New version' });
  await newVersion.getByLabel('MCP server').selectOption({ label: 'Everything (active)' });
  await newVersion.getByLabel('Config (JSON)').fill('{"tool_name": "echo",');
  await newVersion.getByRole('button', { name: 'Save draft' }).click();
  await newVersion.getByText(/not valid JSON/).waitFor();
  await newVersion.getByLabel('Config (JSON)').fill('{"tool_name": "echo", "query_argument": "text"}');
  await newVersion.getByRole('button', { name: 'Save draft' }).click();
  await page.getByRole('button', { name: 'Edit version 1' }).click();
  const draft = page.getByRole('form', { name: 'Draft version 1' });
  t.same(JSON.parse(await draft.getByLabel('Config (JSON)').inputValue()), { tool_name: 'echo', query_argument: 'text' }, 'the draft opens with its config');
  await draft.getByLabel('Config (JSON)').fill('{"tool_name": "echo", "query_argument": "message"}');
  await draft.getByRole('button', { name: 'Save draft' }).click();
  await draft.waitFor({ state: 'detached' });
  await page
    .getByRole('row', { name: /^1 mcp/ })
    .getByText('"query_argument":"message"')
    .waitFor();
  t.pass('the draft is changed in place: still version 1');
  await page.getByRole('button', { name: 'Release version 1' }).click();
  await page
    .getByRole('row', { name: /^1 mcp/ })
    .locator('time')
    .waitFor();
  await checkAccessibility(t, page, 'skill');
  await screenshot(page, 'skill');

  await page.goto(`/console/agents/${agent.agent_id}`);
  const skills = page.getByRole('region', { name: 'Skills' });
  await skills.getByText('No skill mounted.').waitFor();
  await skills.getByLabel('Skill', { exact: true }).selectOption({ label: 'echo_back' });
  await skills.getByLabel('Released version').waitFor();
  await skills.getByRole('button', { name: 'Mount skill' }).click();
  await skills.getByRole('cell', { name: 'echo_back v1' }).waitFor();
  t.pass('mounted');

  await page.goto(`/console/playground?agent=${agent.agent_id}`);
  await page.getByLabel('Message').fill('Repeat after me');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.locator('.message.assistant p').first().waitFor();
  await page.goto(`/console/agents/${agent.agent_id}`);
  const call = skills.getByRole('table', { name: 'Skill calls' }).getByRole('row', { name: /echo_back/ });
  await call.waitFor();
  t.match(await call.textContent(), /echo_back v1.*echo.*success/, 'the turn called the skill, audited with its status');
  await skills.getByRole('button', { name: 'Pause echo_back' }).click();
  await skills.getByRole('cell', { name: /paused/ }).waitFor();
  await checkAccessibility(t, page, 'agent with skills');
});

t.test('documents: a runtime agent registered (an unsuitable one refused with reasons), an invoice recognized and reviewed', async (t) => {
  const reader = (
    await root.request('POST', '/agents', {
      name: 'Invoice reader',
      agent_type: 'fusion',
      fusion_definition: {
        instructions: 'Extract the invoice fields.',
        input_slots: [{ name: 'document', kind: 'file', accepted_content_types: ['application/pdf', 'image/*'] }],
        output_slots: [
          {
            name: 'fields',
            kind: 'structured_json',
            structured_output_profile: 'document_field_set',
            structured_output_schema: {
              type: 'object',
              required: ['invoice_number', 'vendor', 'due_date', 'total'],
              properties: {
                invoice_number: { type: 'string', title: 'Invoice number' },
                vendor: { type: 'string' },
                due_date: { type: 'string', format: 'date' },
                total: { type: 'number' },
              },
            },
          },
        ],
      },
    })
  ).body;
  await root.request('POST', `/agents/${reader.agent_id}/publish`, {});
  const unsuitable = (
    await root.request('POST', '/agents', {
      name: 'Not a reader',
      agent_type: 'fusion',
      fusion_definition: { instructions: 'Say hello.', input_slots: [{ name: 'text', kind: 'text' }], output_slots: [{ name: 'reply', kind: 'text' }] },
    })
  ).body;
  await root.request('POST', `/agents/${unsuitable.agent_id}/publish`, {});

  const { page } = await newPage(t);
  await page.goto('/console/documents');
  await logIn(page, BOOTSTRAP_ADMIN.username, BOOTSTRAP_ADMIN.password);
  await page.getByText('No runtime agent registered yet.').waitFor();
  await page.getByLabel('Fusion agent').selectOption({ label: 'Not a reader' });
  await page.getByRole('button', { name: 'Register' }).click();
  await page.getByText(/Could not register the agent/).waitFor();
  t.match(await page.locator('.field-error').first().textContent(), /file/, 'the reasons it does not fit are listed');
  await page.getByLabel('Fusion agent').selectOption({ label: 'Invoice reader' });
  await page.getByRole('button', { name: 'Register' }).click();
  const registered = page.getByRole('region', { name: 'Runtime agents' }).getByRole('row', { name: /Invoice reader/ });
  await registered.waitFor();
  t.match(
    await registered.textContent(),
    /available.*application\/pdf.*Invoice number, vendor, due_date, total/,
    'registered with its upload types and fields',
  );

  const invoice = execFileSync(process.execPath, [fileURLToPath(new URL('../../examples/invoice.mjs', import.meta.url))]);
  await page.getByLabel('Document', { exact: true }).setInputFiles({ name: 'invoice.pdf', mimeType: 'application/pdf', buffer: invoice });
  await page.getByRole('button', { name: 'Recognize' }).click();
  await page.getByRole('heading', { name: 'invoice.pdf' }).waitFor();
  await page
    .getByRole('status')
    .filter({ hasText: /^succeeded/ })
    .waitFor({ timeout: 60_000 });
  const fields = page.getByRole('region', { name: 'Fields' });
  t.match(await fields.getByRole('row', { name: /^Invoice number/ }).textContent(), /INV-2026-0042.*1/, 'a field, its value and its page');
  await page.getByRole('img', { name: 'Page 1 of invoice.pdf' }).waitFor();
  t.ok(await page.getByRole('img', { name: 'Page 1 of invoice.pdf' }).evaluate((img: HTMLImageElement) => img.naturalWidth > 0), 'the page preview is shown');

  await fields.getByRole('button', { name: 'Correct vendor' }).click();
  await fields.getByLabel('Note on vendor').fill('legal name');
  await fields.getByLabel('Right value').fill('Acme Supplies GmbH');
  await fields.getByRole('button', { name: 'Save' }).click();
  await fields
    .getByRole('row', { name: /^vendor/ })
    .getByText('corrected: legal name')
    .waitFor();
  for (const field of ['Invoice number', 'due_date', 'total']) {
    await fields.getByRole('button', { name: `Accept ${field}` }).click();
    await fields
      .getByRole('row', { name: new RegExp(`^${field}`) })
      .getByRole('cell', { name: 'accepted', exact: true })
      .waitFor();
  }
  await page.getByText('reviewed: 4 of 4 fields').waitFor();
  await fields
    .getByRole('row', { name: /^vendor/ })
    .getByRole('button', { name: '1 revisions' })
    .click();
  t.match(
    await page.getByRole('list', { name: 'Revisions of vendor' }).textContent(),
    /extracted Acme Supplies Ltd.*corrected Acme Supplies GmbH \(legal name\) by root-admin/s,
    'the revision, its note and its reviewer',
  );
  await checkAccessibility(t, page, 'document run');
  await screenshot(page, 'document-run');
  await page.getByRole('link', { name: 'Documents' }).click();
  t.match(await page.getByRole('row', { name: /invoice\.pdf/ }).textContent(), /succeeded.*reviewed \(4 of 4\)/, 'the list shows it reviewed');
  await checkAccessibility(t, page, 'documents');
});

t.test("the dashboard charts an agent's tokens a day beside its cost overview", async (t) => {
  const { page } = await newPage(t);
  await page.goto('/console/');
  await logIn(page, BOOTSTRAP_ADMIN.username, BOOTSTRAP_ADMIN.password);
  await page.getByLabel('Agent').selectOption({ label: 'Refund desk' });
  const chart = page.getByRole('img', { name: /tokens and \$/ });
  await chart.waitFor();
  const byDay = (await root.request('GET', `/agents/${await page.getByLabel('Agent').inputValue()}/usage-by-day?days=30`)).body.days;
  const total = byDay.reduce((sum: number, day: { total_tokens: number }) => sum + day.total_tokens, 0);
  t.ok(total > 0, 'the playground turns of this agent used tokens');
  t.match(await chart.getAttribute('aria-label'), new RegExp(`^${total} tokens and \\$[\\d.]+ over 30 days`), 'the summary tells the chart in words');
  t.equal(await chart.locator('rect').count(), 30, 'one bar a day');
  t.match(await page.getByRole('region', { name: 'Usage and cost' }).textContent(), new RegExp(`Conversations${total} tokens`), 'the cost overview beside it');
  await checkAccessibility(t, page, 'dashboard with usage');
  await screenshot(page, 'dashboard-usage');
});

t.test("an administrator's account: renamed, password reset (their session ends), disabled and deleted, each after the password", async (t) => {
  const target = await createSubAdmin(root, 'to-manage', ['agents.read']);
  const { page } = await newPage(t);
  await page.goto(`/console/admin-users/${target.id}`);
  await logIn(page, BOOTSTRAP_ADMIN.username, BOOTSTRAP_ADMIN.password);
  const dialog = page.getByRole('dialog', { name: 'Confirm with your password' });
  const confirm = async () => {
    await dialog.getByLabel('Password').fill(BOOTSTRAP_ADMIN.password);
    await dialog.getByRole('button', { name: 'Confirm' }).click();
  };
  await page.getByLabel('Display name').fill('Managed Person');
  await page.getByRole('button', { name: 'Save profile' }).click();
  await confirm();
  await page.getByText(/Managed Person · sub_admin/).waitFor();
  t.equal((await root.request('GET', `/admin/admin-users/${target.id}`)).body.display_name, 'Managed Person', 'renamed');

  await page.getByLabel(/^New password/).fill('short');
  await page.getByRole('button', { name: 'Set password' }).click();
  await confirm();
  t.match(
    await page.getByRole('form', { name: 'Password reset' }).getByRole('alert').textContent(),
    /12 characters/,
    'a short password is refused with the rule',
  );
  await page.getByLabel(/^New password/).fill('a brand new password 1');
  await page.getByRole('button', { name: 'Set password' }).click();
  await confirm();
  await page.getByText('Password set; their sessions have ended.').waitFor();
  t.equal((await target.client.request('GET', '/admin/auth/me')).status, 401, "the target's session ended");

  await page.getByLabel('Status').selectOption('disabled');
  await page.getByRole('button', { name: 'Save profile' }).click();
  await confirm();
  await page.getByText(/Managed Person · sub_admin · disabled/).waitFor();
  await checkAccessibility(t, page, 'administrator account');
  await page.getByRole('button', { name: 'Delete to-manage' }).click();
  await confirm();
  await page.getByRole('heading', { name: 'Administrators' }).waitFor();
  t.equal((await root.request('GET', `/admin/admin-users/${target.id}`)).status, 404, 'deleted');
});

t.test('a reply corrected beside its inspector, published into the agent knowledge, and retrieved by the next turn', async (t) => {
  const agent = (await root.request('POST', '/agents', { name: 'Corrected desk', agent_type: 'chat' })).body;
  const { page } = await newPage(t);
  await page.goto(`/console/playground?agent=${agent.agent_id}`);
  await logIn(page, BOOTSTRAP_ADMIN.username, BOOTSTRAP_ADMIN.password);
  await page.getByLabel('Message').fill('How long is the warranty on kettles?');
  await page.getByRole('button', { name: 'Send' }).click();
  const correction = page.getByRole('region', { name: 'Correction' });
  await correction.getByText('No correction yet.').waitFor();
  t.equal(await correction.getByLabel('Question').inputValue(), 'How long is the warranty on kettles?', "the draft starts from the turn's question");
  await correction.getByLabel('Right answer').fill('');
  await correction.getByRole('button', { name: 'Save draft' }).click();
  await correction.getByRole('alert').waitFor();
  t.pass('an empty answer is refused');
  await correction.getByLabel('Right answer').fill('Kettles carry a warranty of three years.');
  await correction.getByRole('button', { name: 'Save draft' }).click();
  await correction.getByText(/^draft, revision 1/).waitFor();
  await correction.getByRole('button', { name: 'Publish' }).click();
  await correction.getByText(/^published, revision 1 \(revision 1 published into .*\) · indexing succeeded/).waitFor({ timeout: 60_000 });
  await checkAccessibility(t, page, 'correction editor');
  await screenshot(page, 'correction');

  await page.getByRole('button', { name: 'New conversation' }).click();
  await page.getByLabel('Message').fill('How long is the warranty on kettles?');
  await page.getByRole('button', { name: 'Send' }).click();
  const chunks = page.getByRole('table', { name: 'Retrieved chunks' });
  await chunks.waitFor();
  t.match(await chunks.textContent(), /warranty of three years/, 'the next turn retrieves the published correction');
  const debug = page.getByRole('region', { name: 'Retrieval, step by step' });
  await debug.getByRole('button', { name: 'Run retrieval' }).click();
  t.match(
    await debug.getByRole('status').textContent(),
    /hits:.*How long is the warranty on kettles\?/,
    "the turn's retrieval run again, its conclusion and query",
  );
  await debug.getByLabel(/^Query/).fill('opening hours of the shop');
  await debug.getByRole('button', { name: 'Run retrieval' }).click();
  await debug.getByRole('status').filter({ hasText: 'opening hours' }).waitFor();
  t.pass('another query is tried on the same turn');
  await checkAccessibility(t, page, 'retrieval debug');

  const sources = (await root.request('GET', '/knowledge-sources?limit=100')).body.items as { source_id: string; source_kind: string; name: string }[];
  const managed = sources.filter((s) => s.source_kind === 'managed_correction' && s.name === 'Corrections: Corrected desk');
  t.equal(managed.length, 1, 'the agent has one managed correction source');
  await page.goto(`/console/knowledge/${managed[0]!.source_id}`);
  const ledger = page.getByRole('table', { name: 'Publication ledger, newest first' });
  const published = ledger.getByRole('row', { name: /How long is the warranty on kettles\?/ });
  await published.waitFor();
  t.match(
    await published.textContent(),
    /Kettles carry a warranty of three years\..*1.*published.*succeeded/,
    "the source's ledger shows the publication and its indexing",
  );
  await checkAccessibility(t, page, 'correction ledger');
});

t.test(
  'a grounded agent that cannot answer: its session and the sessions list show it asks for a person, a dropped socket comes back with nothing twice, the inspector shows the decision',
  async (t) => {
    const agent = (
      await root.request('POST', '/agents', {
        name: 'Strict desk',
        agent_type: 'chat',
        public_access_mode: 'public_anonymous',
        human_takeover_enabled: true,
        response_grounding_config: { enabled: true, mode: 'strict', low_confidence_behavior: 'handoff' },
      })
    ).body;
    const sessionId = (await fetch(`${host.url}/public/agents/${agent.agent_id}/sessions`, { method: 'POST' }).then((r) => r.json())).session_id;
    const customer = await WsClient.connect(host.url, `/public/ws/${encodeURIComponent(sessionId)}`);
    t.teardown(() => customer.close());
    const { context, page } = await newPage(t);
    await page.goto(`/console/sessions/${encodeURIComponent(sessionId)}`);
    await logIn(page, BOOTSTRAP_ADMIN.username, BOOTSTRAP_ADMIN.password);
    await page.getByText('Live').waitFor();
    t.same(await customer.send('user_message', { content: 'Can I pay with gold bars?' }), { ok: true });
    await page.getByText(/Asks for a person \((no evidence|not grounded)\)/).waitFor();
    t.pass('the handoff request shows as a badge, live');

    await context.setOffline(true);
    await page.getByText('Connecting…').waitFor();
    t.same(await customer.send('user_message', { content: 'Is anyone there?' }), { ok: true });
    await context.setOffline(false);
    const transcript = page.getByRole('list', { name: 'Transcript' });
    await transcript.getByText('Is anyone there?').waitFor();
    await page.getByText('Live').waitFor();
    const stored = (await root.request('GET', `/sessions/${encodeURIComponent(sessionId)}/messages`)).body.items;
    t.equal(await transcript.getByRole('listitem').count(), stored.length, 'after the reconnect every stored message shows once');
    t.equal(await transcript.getByText('Can I pay with gold bars?').count(), 1, 'the message before the drop is not repeated');
    await checkAccessibility(t, page, 'session asking for a person');

    await page.goto(`/console/sessions?agent=${agent.agent_id}`);
    const row = page.getByRole('row').filter({ hasText: sessionId });
    await row.getByText('AI, asks for a person').waitFor();
    t.pass('the sessions list flags it too');

    await page.goto(`/console/playground?agent=${agent.agent_id}`);
    await page.getByLabel('Message').fill('Can I pay with gold bars?');
    await page.getByRole('button', { name: 'Send' }).click();
    const inspector = page.getByRole('region', { name: 'Turn inspector' });
    await inspector.getByText(/^low confidence handoff/).waitFor();
    t.match(
      await inspector.textContent(),
      /grounding\s*low confidence handoff \((no evidence|not grounded)\)/,
      "the inspector shows the turn's grounding decision",
    );
  },
);
