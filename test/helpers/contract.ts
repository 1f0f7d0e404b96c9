import { Ajv2020 } from 'ajv/dist/2020.js';
import type { OpenApiDocument } from '@agent-host/host';

/**
 * The OpenAPI contract check of every response a test receives: the operation and the response of its status (or
 * the `default` error) must be documented, and a JSON body must match the schema declared for it. Registered per
 * running host.
 */
interface Contract {
  ajv: Ajv2020;
  validators: Map<string, ReturnType<Ajv2020['compile']>>;
  operations: { method: string; pattern: RegExp; params: number; template: string; operation: { responses: Record<string, { content?: Record<string, unknown> }> } }[];
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
      pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
      operation: operation as unknown as Contract['operations'][number]['operation'],
    })),
  );
  // A literal segment wins over a parameter (`/sessions/search` before `/sessions/{session_id}`).
  operations.sort((a, b) => a.params - b.params);
  contracts.set(baseUrl, { ajv, validators: new Map(), operations });
}

/** Why a response breaks the contract, or `undefined` when it keeps it (or no contract is registered for the host). */
export function contractViolation(baseUrl: string, method: string, pathname: string, status: number, contentType: string | null, body: unknown): string | undefined {
  const contract = contracts.get(baseUrl);
  if (!contract) return undefined;
  const path = pathname.split('?')[0]!;
  const verb = method.toLowerCase();
  const found = contract.operations.find((o) => o.method === verb && o.pattern.test(path));
  // Not an operation: an unknown route, or the documentation routes (/openapi.json, /docs, ...), which api-docs.test.ts covers.
  if (!found) return undefined;
  const key = String(status) in found.operation.responses ? String(status) : 'default';
  const response = found.operation.responses[key];
  if (!response) return `${method} ${found.template} answered ${status}, which /openapi.json does not document`;
  if (!contentType?.startsWith('application/json') || body === undefined) return undefined;
  // Operations that declare no body schema yet are not checked (issue 15 item 1 is under way).
  const declared = response.content?.['application/json'] as { schema?: unknown } | undefined;
  if (!declared?.schema) return undefined;
  const ref = `openapi#/paths/${pointer(found.template)}/${verb}/responses/${key}/content/${pointer('application/json')}/schema`;
  let validate = contract.validators.get(ref);
  if (!validate) contract.validators.set(ref, (validate = contract.ajv.compile({ $ref: ref })));
  return validate(body) ? undefined : `${method} ${found.template} ${status} breaks /openapi.json: ${contract.ajv.errorsText(validate.errors)}`;
}
