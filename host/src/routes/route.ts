import type { AgentHostApp } from '@agent-host/core';
import type { Request, Response } from 'restify';
import type { z } from 'zod';
import type { RequestContext, RouteAccess } from '../access/route-access.js';

/** One HTTP route: the route files export lists of these; the server mounts them behind the access guard. */
export interface RouteDefinition<B = unknown, Q = unknown> {
  method: 'get' | 'post' | 'put' | 'patch' | 'del';
  path: string;
  access: RouteAccess;
  summary: string;
  /** The API documentation itself (`/openapi.json`, `/docs`, their assets): served, but not an operation of the document. */
  meta?: true;
  /** The route reads a `multipart/form-data` body (an upload) with the file in `field`; every other route takes JSON only. */
  multipart?: { field: string };
  /** Request body schema: validated before the handler (422 with `{loc, msg, type}` issues) and published in /openapi.json. */
  body?: z.ZodType<B>;
  /** Query parameters: validated before the handler the same way (`loc` starts with `query`) and published. */
  query?: z.ZodType<Q>;
  /** The success answer when it is not `200` with JSON: a create's 201, an event stream; `schema` describes its body. */
  success?: { status: number; description: string; contentType?: string; schema?: z.ZodType };
  /** The route's own refusals (status: when), besides validation, login and permission ones. */
  refusals?: Record<number, string>;
  handler(req: Request, res: Response, context: RequestContext & { body: B; query: Q }): Promise<unknown>;
}

/** Identity, so a route's body and query types are inferred from its schemas. */
export const route = <B = undefined, Q = undefined>(definition: RouteDefinition<B, Q>): RouteDefinition<B, Q> => definition;

// Each route has its own body and query types; the list holds them all. A factory keeps references and reads the app's
// domains only when a request comes, so the route table (and /openapi.json) is built without starting the app.
export type RouteFactory = (app: AgentHostApp) => RouteDefinition<any, any>[];
