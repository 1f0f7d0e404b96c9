import { isPermissionCode } from '@agent-host/core';
import { createServer } from '@agent-host/host';
import t from 'tap';
import { startTestHost } from '../helpers/host.js';

// Spec 5.6: the routes open without administrator login. Login and refresh
// are public by nature (they create the session).
const PUBLIC = [
  /^\/healthz$/,
  /^\/readyz$/, // probes of load balancers and orchestrators carry no login (docs/api-decisions.md)
  /^\/stream$/,
  /^\/models$/,
  /^\/public\/agents/,
  /^\/public\/ws\//,
  /^\/document-recognition\/(runtime-agents|runs)/,
  /^\/admin\/auth\/(login|refresh)$/,
  /^\/console(\/\*)?$/, // the console's static files: all they show comes from API calls that need a login
];
// Routes any logged-in administrator may use, whatever their permissions.
const LOGIN_ONLY = [
  /^\/chat-orchestrators$/,
  /^\/admin\/auth\//,
  /^\/admin\/permission-catalog$/,
  /^\/(openapi\.json|asyncapi\.json|docs|redoc)$/,
  /^\/admin\/api-tokens(\/:token_id)?$/,
  /^\/(docs|redoc)\/assets\/:file$/,
];

t.test('every registered route is public per spec 5.6, login-only by nature, or declares a catalog permission', async (t) => {
  const host = await startTestHost(t);
  const { routes } = createServer(host.app);
  t.ok(routes.length >= 9, 'routes are enumerated');
  for (const route of routes) {
    const name = `${route.method.toUpperCase()} ${route.path}`;
    if ('public' in route.access)
      t.ok(
        PUBLIC.some((p) => p.test(route.path)),
        `${name} is public and in the public list`,
      );
    else if ('login' in route.access)
      t.ok(
        LOGIN_ONLY.some((p) => p.test(route.path)),
        `${name} needs only a login and is allowed to`,
      );
    else {
      for (const code of [route.access.permission, ...(route.access.alsoRequires ?? [])])
        t.ok(isPermissionCode(code), `${name} declares ${code}, a catalog permission`);
    }
  }
});

t.test('every route that is not public refuses an anonymous caller with 401 LOGIN_REQUIRED before it reads ids or body', async (t) => {
  const host = await startTestHost(t);
  const guarded = createServer(host.app).routes.filter((route) => !('public' in route.access));
  t.ok(guarded.length >= 100, `${guarded.length} routes need a login`);
  // Ids that name nothing and a body that validates against nothing: the login is checked before either.
  const id = '00000000-0000-4000-8000-000000000000';
  for (const route of guarded) {
    const url = host.url + route.path.replace(/:\w+/g, id).replace(/\*/g, 'x');
    const method = route.method === 'del' ? 'DELETE' : route.method.toUpperCase();
    const contentType = route.multipart ? 'multipart/form-data; boundary=x' : 'application/json';
    const body = route.multipart ? '--x--\r\n' : '{}';
    const response = await fetch(url, { method, ...(method === 'GET' ? {} : { headers: { 'content-type': contentType }, body }) });
    const refusal = (await response.json()) as { code?: string };
    t.same({ status: response.status, code: refusal.code }, { status: 401, code: 'LOGIN_REQUIRED' }, `${method} ${route.path} anonymously`);
  }
});
