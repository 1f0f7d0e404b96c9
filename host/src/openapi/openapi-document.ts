import { readFileSync } from 'node:fs';
import { ERROR_CODES } from '@agent-host/sdk';
import { z } from 'zod';
import { CHALLENGE_HEADER } from '../access/route-access.js';
import { pathParamRefusal, uuidParam } from '../http/path-params.js';
import { ACCESS_COOKIE } from '../access/cookies.js';
import type { AnyRoute, RouteDefinition } from '../routes/route.js';

/** A JSON value as it appears in the document. */
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** The parts of an OpenAPI 3.1 document agent-host produces. */
export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  paths: Record<string, Record<string, JsonObject>>;
  components: { schemas: Record<string, JsonObject>; headers: Record<string, JsonObject>; securitySchemes: Record<string, JsonObject> };
}

export const SECURITY_SCHEME = ACCESS_COOKIE;
/** The other way in: an administrator API token as `Authorization: Bearer`. */
export const TOKEN_SECURITY_SCHEME = 'admin_api_token';
const HTTP_METHODS = { get: 'get', post: 'post', put: 'put', patch: 'patch', del: 'delete' } as const;
const PATH_PARAM = /:([A-Za-z_][A-Za-z0-9_]*)/g;

let hostVersion: string | undefined;
/** host/package.json's version; the file sits two levels up from both src/openapi and dist/openapi. */
function readHostVersion(): string {
  hostVersion ??= (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  return hostVersion;
}

/** Every response names its request. */
const REQUEST_ID_HEADER = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } };

const errorResponse = (description: string, schema: 'HTTPError' | 'ValidationError'): JsonObject => ({
  description,
  headers: REQUEST_ID_HEADER,
  content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } },
});

const ISSUES: JsonObject = {
  type: 'array',
  items: {
    type: 'object',
    properties: {
      loc: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'integer' }] }, description: 'Where the issue is, e.g. ["body", "username"]' },
      msg: { type: 'string', description: 'What is wrong, in words' },
      type: { type: 'string', description: 'The kind of issue: `missing`, `too_big`, `invalid_value`, ...' },
    },
    required: ['loc', 'msg', 'type'],
  },
};

/** The fields every error envelope has besides `detail` (http/error-envelope.ts). */
const ENVELOPE: Record<string, JsonObject> = {
  code: { $ref: '#/components/schemas/ErrorCode' },
  message: { type: 'string', description: 'One sentence for a person' },
  request_id: { type: 'string', description: 'The X-Request-Id of the response; quote it when reporting a problem' },
};

const SHARED_SCHEMAS: Record<string, JsonObject> = {
  ErrorCode: {
    type: 'string',
    description: `A stable error code; clients match on it, never on the English text. The catalog (docs/error-codes.md):\n\n${Object.entries(ERROR_CODES)
      .map(([code, { status, description }]) => `- \`${code}\` (${status ?? 'in a stream'}): ${description}`)
      .join('\n')}`,
    enum: Object.keys(ERROR_CODES),
  },
  HTTPError: {
    type: 'object',
    description: 'Every error response. `detail` is a message, an object for structured errors, or the issues of a 422 (also in `errors`).',
    properties: { detail: { anyOf: [{ type: 'string' }, { type: 'object' }, ISSUES] }, ...ENVELOPE, errors: ISSUES },
    required: ['detail', 'code', 'message', 'request_id'],
  },
  ValidationError: {
    type: 'object',
    description: 'A request that failed validation (422): one entry per issue, in `detail` and in `errors`.',
    properties: { detail: ISSUES, ...ENVELOPE, errors: ISSUES },
    required: ['detail', 'code', 'message', 'request_id', 'errors'],
  },
};

/** A route that takes the rest of the path (`/object-store/objects/*`): the document names it `{key}`. */
const REST_OF_PATH = /\/\*$/;
const REST_OF_PATH_PARAM = 'key';

/** `/admin/system-settings/:config_key` → `/admin/system-settings/{config_key}`. */
export const openApiPath = (path: string) => path.replace(PATH_PARAM, '{$1}').replace(REST_OF_PATH, `/{${REST_OF_PATH_PARAM}}`);

const operationId = (method: string, path: string) =>
  `${method}_${path
    .replace(PATH_PARAM, 'by_$1')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_|_$/g, '')}`;

/** Groups operations by their first segment (`/admin/<area>` for the administrator API). */
function tagOf(path: string): string {
  const [first, second] = path.split('/').filter(Boolean);
  if (!first) return 'root';
  return first === 'admin' && second && !second.startsWith(':') ? `admin/${second}` : first;
}

/**
 * Converts a body schema to JSON Schema (the request side: before transforms
 * and defaults). Its `$defs` (cycles, schemas with an id) move to
 * components.schemas, since a `#/$defs/...` pointer inside the document would
 * resolve against the document root.
 */
export function bodySchema(schema: z.ZodType, components: Record<string, JsonObject>, io: 'input' | 'output' = 'input'): JsonObject {
  const { $schema: _dialect, $defs, ...json } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonObject & { $defs?: Record<string, JsonObject> };
  if (!$defs) return json;
  const rewrite = (value: Json, names: Map<string, string>): Json => {
    if (Array.isArray(value)) return value.map((v) => rewrite(v, names));
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(
      Object.entries(value).map(([key, v]) => {
        if (key === '$ref' && typeof v === 'string' && v.startsWith('#/$defs/')) {
          const name = decodeURIComponent(v.slice('#/$defs/'.length));
          return [key, `#/components/schemas/${encodeURIComponent(names.get(name) ?? name)}`];
        }
        return [key, rewrite(v, names)];
      }),
    );
  };
  const hoist = (names: Map<string, string>) => Object.entries($defs).map(([name, def]) => [names.get(name)!, rewrite(def, names) as JsonObject] as const);
  // Keep the schemas' own names when they are new or identical to what is there (a schema with an id shared by routes)...
  let names = new Map(Object.keys($defs).map((name) => [name, name]));
  let defs = hoist(names);
  if (defs.some(([name, def]) => name in components && JSON.stringify(components[name]) !== JSON.stringify(def))) {
    // ...else give every one a fresh name.
    const taken = new Set(Object.keys(components));
    names = new Map(
      Object.keys($defs).map((name) => {
        let unique = name;
        for (let i = 2; taken.has(unique); i++) unique = `${name}_${i}`;
        taken.add(unique);
        return [name, unique];
      }),
    );
    defs = hoist(names);
  }
  for (const [name, def] of defs) components[name] = def;
  return rewrite(json, names) as JsonObject;
}

function accessDescription(access: RouteDefinition['access']): string | undefined {
  if ('public' in access) return undefined;
  const challenge = access.challenge
    ? ` Sensitive operation: also requires a challenge token in the \`${CHALLENGE_HEADER}\` header (POST /admin/auth/challenges, then POST /admin/auth/challenges/{challenge_id}/verify), so a browser session: API tokens cannot take challenges.`
    : '';
  if ('login' in access) return `Requires an administrator login (the \`agent_host_access\` cookie, or an API token as \`Authorization: Bearer\`).${challenge}`;
  const codes = [access.permission, ...(access.alsoRequires ?? [])].map((code) => `\`${code}\``).join(' and ');
  return `Requires an administrator login and the permission${access.alsoRequires?.length ? 's' : ''} ${codes}.${challenge}`;
}

/** Builds the OpenAPI 3.1 document for a list of routes; call once per server, routes do not change at run time. */
export function buildOpenApiDocument(routes: readonly AnyRoute[]): OpenApiDocument {
  const schemas: Record<string, JsonObject> = { ...SHARED_SCHEMAS };
  const paths: OpenApiDocument['paths'] = {};

  for (const route of routes) {
    if (route.meta) continue;
    const path = openApiPath(route.path);
    const method = HTTP_METHODS[route.method];
    const { access } = route;
    const parameters: JsonObject[] = [...route.path.matchAll(PATH_PARAM)].map(([, name]) => ({
      name: name!,
      in: 'path',
      required: true,
      schema: { type: 'string', ...(uuidParam(route.path, name!) && { format: 'uuid' }) },
    }));
    if (REST_OF_PATH.test(route.path)) {
      parameters.push({ name: REST_OF_PATH_PARAM, in: 'path', required: true, description: 'The rest of the path, `/` included', schema: { type: 'string' } });
    }
    if ('challenge' in access && access.challenge) {
      parameters.push({
        name: CHALLENGE_HEADER,
        in: 'header',
        required: true,
        description: 'Single-use challenge token from POST /admin/auth/challenges/{challenge_id}/verify',
        schema: { type: 'string' },
      });
    }

    const query =
      route.query && (z.toJSONSchema(route.query, { io: 'input', unrepresentable: 'any' }) as { properties?: Record<string, JsonObject>; required?: string[] });
    if (query) {
      const { properties = {}, required = [] } = query;
      for (const [name, schema] of Object.entries(properties)) {
        const { description, ...rest } = schema;
        parameters.push({ name, in: 'query', required: required.includes(name), ...(description && { description }), schema: rest });
      }
    }

    const { success } = route;
    const ok: JsonObject = { description: success?.description ?? 'Success', headers: REQUEST_ID_HEADER };
    if (success?.schema || success?.contentType) {
      const media: JsonObject = success.schema ? { schema: bodySchema(success.schema, schemas, 'output') } : {};
      // OpenAPI 3.1 cannot type the events of a stream (3.2's itemSchema can); the extension carries the schema of each.
      if (success.itemSchema) media['x-item-schema'] = bodySchema(success.itemSchema, schemas, 'output');
      ok.content = { [success.contentType ?? 'application/json']: media };
    }
    const responses: JsonObject = { [String(success?.status ?? 200)]: ok };
    const operation: JsonObject = { operationId: operationId(method, route.path), summary: route.summary, tags: [tagOf(route.path)] };
    // Generators read `{key}` as one segment; this says it spans the rest of the path.
    if (REST_OF_PATH.test(route.path)) operation['x-rest-of-path'] = REST_OF_PATH_PARAM;
    const description = accessDescription(access);
    if (description) operation.description = description;
    if (parameters.length) operation.parameters = parameters;
    if (route.body) {
      operation.requestBody = {
        // The server validates a missing body as {}: the body is required unless {} is valid.
        required: !route.body.safeParse({}).success,
        content: { 'application/json': { schema: bodySchema(route.body, schemas), ...(route.example && { example: route.example as JsonObject }) } },
      };
    }
    if (route.form && operation.requestBody) {
      const body = operation.requestBody as { content: JsonObject; description?: string };
      body.content['multipart/form-data'] = {
        schema: { type: 'object', additionalProperties: { type: 'string', description: 'a text value, or a file (format binary)' } },
      };
      body.description = `JSON, or multipart/form-data: ${route.form.description}`;
    }
    if (route.multipart) {
      operation.requestBody = {
        required: true,
        content: {
          'multipart/form-data': {
            schema: {
              type: 'object',
              required: [route.multipart.field, ...Object.entries(route.multipart.also ?? {}).flatMap(([name, part]) => (part.required ? [name] : []))],
              properties: {
                [route.multipart.field]: { type: 'string', format: 'binary' },
                ...Object.fromEntries(
                  Object.entries(route.multipart.also ?? {}).map(([name, part]): [string, JsonObject] => [
                    name,
                    part.kind === 'file' ? { type: 'string', format: 'binary' } : { type: 'string' },
                  ]),
                ),
              },
            },
          },
        },
      };
    }
    if (route.body || route.query) {
      responses['422'] = errorResponse(
        `The request ${[route.body && 'body', route.query && 'query'].filter(Boolean).join(' or ')} failed validation`,
        'ValidationError',
      );
    }
    if (!('public' in access)) {
      operation.security = [{ [SECURITY_SCHEME]: [] }, { [TOKEN_SECURITY_SCHEME]: [] }];
      responses['401'] = errorResponse('Administrator login required, or the session expired or was revoked', 'HTTPError');
      if ('permission' in access) {
        operation['x-permission'] = access.permission;
        if (access.alsoRequires?.length) operation['x-also-requires'] = [...access.alsoRequires];
        responses['403'] = errorResponse(
          access.challenge ? `Missing permission ${access.permission}, or the challenge token was refused` : `Missing permission ${access.permission}`,
          'HTTPError',
        );
      }
    }
    // A list's cursor is opaque: one this host did not issue is refused (core/src/db/keyset-cursor.ts).
    if (query?.properties?.cursor) responses['400'] = errorResponse('The cursor is not one a previous page gave (CURSOR_INVALID)', 'HTTPError');
    // Any request with a body: restify's parser and the server's content-type rule (server.ts) answer these.
    if (method === 'post' || method === 'put' || method === 'patch') {
      responses['400'] = errorResponse('The body is not valid JSON (BAD_REQUEST)', 'HTTPError');
      responses['413'] = errorResponse('The JSON body is larger than 1 MiB (PAYLOAD_TOO_LARGE)', 'HTTPError');
      responses['415'] = errorResponse(
        `A body that is not ${route.multipart ? 'multipart/form-data' : route.form ? 'application/json or multipart/form-data' : 'application/json'} (UNSUPPORTED_MEDIA_TYPE)`,
        'HTTPError',
      );
    }
    // An id that names nothing is a 404 of every route that takes one (http/path-params.ts), unless the route says more.
    const named = [...route.path.matchAll(PATH_PARAM)].flatMap(([, name]) => pathParamRefusal(route.path, name!) ?? []);
    if (named.length && !route.refusals?.[404])
      responses['404'] = errorResponse(named.map(({ what, code }) => `No such ${what} (${code})`).join('; '), 'HTTPError');
    // A route's own refusals come after the shared ones: a 403 or 415 of its own adds to the shared one.
    for (const [status, refusal] of Object.entries(route.refusals ?? {})) {
      const shared = responses[status] as { description: string } | undefined;
      responses[status] =
        typeof refusal === 'string'
          ? errorResponse(shared ? `${shared.description}; or: ${refusal}` : refusal, 'HTTPError')
          : {
              description: refusal.when,
              headers: REQUEST_ID_HEADER,
              content: { 'application/json': { schema: bodySchema(refusal.schema, schemas, 'output') } },
            };
    }
    // Every refusal a client can cause is listed above; what remains is a failure of the server.
    responses.default = errorResponse(
      'A failure of the server (5xx), in the error envelope; `code` says which (docs/error-codes.md): `INTERNAL_ERROR` (500), or `DATABASE_UNAVAILABLE` (503, with Retry-After: nothing was changed)',
      'HTTPError',
    );
    operation.responses = responses;
    (paths[path] ??= {})[method] = operation;
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'agent-host',
      version: readHostVersion(),
      description:
        'The agent-host HTTP API. Errors are `{"detail", "code", "message", "request_id"}` with a stable `code` (schema ErrorCode); every response carries `X-Request-Id`. Administrator routes authenticate with the HttpOnly `agent_host_access` cookie set by POST /admin/auth/login.',
    },
    paths,
    components: {
      schemas,
      headers: {
        'X-Request-Id': {
          description:
            "The request's id: the caller's own X-Request-Id when valid (1-128 of A-Z a-z 0-9 . _ : @ -), else one the host made. It is in the host's log lines, audit rows and error bodies.",
          schema: { type: 'string' },
        },
      },
      securitySchemes: {
        [SECURITY_SCHEME]: {
          type: 'apiKey',
          in: 'cookie',
          name: ACCESS_COOKIE,
          description: 'The access token cookie set by POST /admin/auth/login (HttpOnly; renewed by POST /admin/auth/refresh).',
        },
        [TOKEN_SECURITY_SCHEME]: {
          type: 'http',
          scheme: 'bearer',
          description:
            "An administrator API token (POST /admin/api-tokens), acting as its administrator with the token's permissions; it cannot take challenges.",
        },
      },
    },
  };
}
