import type { AgentHostApp, Domains } from '@agent-host/core';
import type { Request, Response } from 'restify';
import type { z } from 'zod';
import type { RequestContext, RouteAccess } from '../access/route-access.js';

/**
 * The type a handler's result must have: the success schema's output with its literal and enum types widened to
 * their primitives. The compiler holds field names, types and nullability to the schema; the contract check of the
 * tests holds the values (test/helpers/contract.ts).
 */
export type Widened<T> = T extends string
  ? string
  : T extends number
    ? number
    : T extends boolean
      ? boolean
      : T extends readonly (infer U)[]
        ? Widened<U>[]
        : T extends object
          ? { [K in keyof T]: Widened<T[K]> }
          : T;

/** One HTTP route: the route files export lists of these; the server mounts them behind the access guard. */
export interface RouteDefinition<B = unknown, Q = unknown, R = unknown> {
  method: 'get' | 'post' | 'put' | 'patch' | 'del';
  path: string;
  access: RouteAccess;
  summary: string;
  /** The API documentation itself (`/openapi.json`, `/docs`, their assets): served, but not an operation of the document. */
  meta?: true;
  /**
   * The route names its request by hand in what it logs (a chat turn's logger carries `req_id`), so it runs outside the
   * request scope (`inRequestScope`), whose promise hooks every promise of the process pays for while a scoped
   * request runs: a streamed turn makes hundreds.
   */
  unscoped?: true;
  /**
   * The route reads a `multipart/form-data` body (an upload) with the file in `field`, and the other parts `also`
   * names (`required` ones too); every other route takes JSON only.
   */
  multipart?: { field: string; also?: Record<string, { kind: 'file' | 'text'; required: boolean }> };
  /**
   * The route takes its `body` as JSON, or the same request as `multipart/form-data` whose fields and files are named
   * as `description` says; the handler reads a form itself (`body` is then undefined).
   */
  form?: { description: string };
  /** Request body schema: validated before the handler (422 with `{loc, msg, type}` issues) and published in /openapi.json. */
  body?: z.ZodType<B>;
  /** An example request body, published in the document (the docs test checks it against `body`). */
  example?: Record<string, unknown>;
  /** Query parameters: validated before the handler the same way (`loc` starts with `query`) and published. */
  query?: z.ZodType<Q>;
  /**
   * The success answer: its status (a create's 201, a 202, a 204), content type when not JSON (an event stream), and
   * the schema of its body, which the handler's result must satisfy, so the document and the code cannot drift apart.
   */
  success?: {
    status: number;
    description: string;
    contentType?: string;
    schema?: z.ZodType<R>;
    /** For an event stream: the schema of each event's data (the document's `x-item-schema`). */
    itemSchema?: z.ZodType;
  };
  /**
   * The route's own refusals (status: when, with the codes in parentheses), besides those the document derives:
   * validation, login and permission, bodies, cursors, and the 404 of each path id (a route's own 404 replaces that
   * one). Their body is the error envelope unless a schema says otherwise (`/readyz`'s 503).
   */
  refusals?: Record<number, string | { when: string; schema: z.ZodType }>;
  handler(req: Request, res: Response, context: RequestContext & { body: B; query: Q }): Promise<Widened<NoInfer<R>>>;
}

/** Identity, so a route's body, query and result types are inferred from its schemas. */
export const route = <B = undefined, Q = undefined, R = unknown>(definition: RouteDefinition<B, Q, R>): RouteDefinition<B, Q, R> => definition;

/** The host as a route file sees it: configuration, plugins and services; the domains come by name (`RouteFactory`). */
export type HostContext = Omit<AgentHostApp, 'domains'>;

/** A route as the route table holds them: each has its own body, query and result types, which a list cannot name. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
export type AnyRoute = RouteDefinition<any, any, any>;

// A route file names the domains it uses in its type, and reads them from `domains` only when a request comes, so the
// route table (and /openapi.json) is built without starting the app.
export type RouteFactory<K extends keyof Domains = never> = (domains: Pick<Domains, K>, host: HostContext) => AnyRoute[];
