import { Ajv2020 } from 'ajv/dist/2020.js';
import type { OpenApiDocument } from '@agent-host/host';

/**
 * The OpenAPI contract check of every response a test receives: the operation and the response of its status (or
 * the `default` error) must be documented, and a JSON body must match the schema declared for it. Registered per
 * running host.
 */
interface Contract {
  ajv: Ajv2020;
  /** Every status each operation (`GET /agents/{agent_id}`) answered, for the test that calls them all. */
  answered: Map<string, Set<number>>;
  validators: Map<string, ReturnType<Ajv2020['compile']>>;
  operations: {
    method: string;
    pattern: RegExp;
    params: number;
    template: string;
    operation: { responses: Record<string, { content?: Record<string, unknown> }> };
  }[];
}

const contracts = new Map<string, Contract>();

/** JSON pointer segment, URI-encoded for a `$ref`. */
const pointer = (segment: string) => encodeURIComponent(segment.replaceAll('~', '~0').replaceAll('/', '~1'));

export function registerContract(baseUrl: string, document: OpenApiDocument): void {
  const ajv = new Ajv2020({ strict: false, allErrors: true, formats: { uuid: true, 'date-time': true, uri: true, email: true } });
  ajv.addSchema({ ...document, $id: 'openapi' });
  const operations = Object.entries(document.paths).flatMap(([template, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({
      method,
      template,
      params: (template.match(/\{/g) ?? []).length,
      // `x-rest-of-path` names a parameter that spans the rest of the path (an object key).
      pattern: new RegExp(
        `^${template.replace(/\{([^}]+)\}/g, (_, name) => ((operation as { 'x-rest-of-path'?: string })['x-rest-of-path'] === name ? '.+' : '[^/]+'))}$`,
      ),
      operation: operation as unknown as Contract['operations'][number]['operation'],
    })),
  );
  // A literal segment wins over a parameter (`/sessions/search` before `/sessions/{session_id}`).
  operations.sort((a, b) => a.params - b.params);
  contracts.set(baseUrl, { ajv, answered: new Map(), validators: new Map(), operations });
}

/** The documented operation and response of a call, or why there is none. */
function documented(contract: Contract, method: string, pathname: string, status: number) {
  const path = pathname.split('?')[0]!;
  const verb = method.toLowerCase();
  const found = contract.operations.find((o) => o.method === verb && o.pattern.test(path));
  if (!found) return undefined;
  const operation = `${method.toUpperCase()} ${found.template}`;
  contract.answered.set(operation, (contract.answered.get(operation) ?? new Set()).add(status));
  // A client refusal (4xx) must be listed by its status; `default` stands only for failures of the server (5xx).
  const key = String(status) in found.operation.responses ? String(status) : status >= 500 ? 'default' : undefined;
  const response = key && found.operation.responses[key];
  if (!key || !response) return { problem: `${method} ${found.template} answered ${status}, which /openapi.json does not document` };
  return { found, verb, key, response };
}

/** A validator for the schema at `pointer` under the response (compiled once). */
function validatorAt(contract: Contract, template: string, verb: string, key: string, mediaType: string, member: string) {
  const ref = `openapi#/paths/${pointer(template)}/${verb}/responses/${key}/content/${pointer(mediaType)}/${member}`;
  let validate = contract.validators.get(ref);
  if (!validate) contract.validators.set(ref, (validate = contract.ajv.compile({ $ref: ref })));
  return validate;
}

/** Why a response breaks the contract, or `undefined` when it keeps it (or no contract is registered for the host). */
export function contractViolation(
  baseUrl: string,
  method: string,
  pathname: string,
  status: number,
  contentType: string | null,
  body: unknown,
): string | undefined {
  const contract = contracts.get(baseUrl);
  if (!contract) return undefined;
  const call = documented(contract, method, pathname, status);
  // Not an operation: an unknown route, or the documentation routes (/openapi.json, /docs, ...), which api-docs.test.ts covers.
  if (!call || 'problem' in call) return call?.problem;
  const { found, verb, key, response } = call;
  if (!contentType?.startsWith('application/json') || body === undefined) return undefined;
  const declared = response.content?.['application/json'] as { schema?: unknown } | undefined;
  if (!declared?.schema) return `${method} ${found.template} answered ${status} with a JSON body, but /openapi.json declares no schema for it`;
  const validate = validatorAt(contract, found.template, verb, key, 'application/json', 'schema');
  return validate(body) ? undefined : `${method} ${found.template} ${status} breaks /openapi.json: ${contract.ajv.errorsText(validate.errors)}`;
}

/** Why the events of an event stream break the contract (each must match the operation's `x-item-schema`), or `undefined`. */
export function streamViolation(baseUrl: string, method: string, pathname: string, status: number, events: readonly unknown[]): string | undefined {
  const contract = contracts.get(baseUrl);
  if (!contract) return undefined;
  const call = documented(contract, method, pathname, status);
  if (!call || 'problem' in call) return call?.problem;
  const { found, verb, key, response } = call;
  if (!(response.content?.['text/event-stream'] as { 'x-item-schema'?: unknown } | undefined)?.['x-item-schema']) {
    return `${method} ${found.template} answered an event stream, but /openapi.json declares no x-item-schema for its events`;
  }
  const validate = validatorAt(contract, found.template, verb, key, 'text/event-stream', 'x-item-schema');
  const bad = events.find((event) => !validate(event));
  return bad === undefined
    ? undefined
    : `${method} ${found.template} sent an event that breaks /openapi.json: ${JSON.stringify(bad)}: ${contract.ajv.errorsText(validate.errors)}`;
}

/** The statuses each operation of the host answered so far, by `METHOD /template`. */
export const answeredOperations = (baseUrl: string): ReadonlyMap<string, ReadonlySet<number>> => contracts.get(baseUrl)?.answered ?? new Map();
