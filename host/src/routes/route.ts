import type { AgentHostApp } from '@agent-host/core';
import type { Request, Response } from 'restify';
import type { z } from 'zod';
import type { RequestContext, RouteAccess } from '../access/route-access.js';

/** One HTTP route: the route files export lists of these; the server mounts them behind the access guard. */
export interface RouteDefinition<B = unknown> {
  method: 'get' | 'post' | 'put' | 'patch' | 'del';
  path: string;
  access: RouteAccess;
  summary: string;
  /** The route reads a `multipart/form-data` body (an upload); every other route takes JSON only. */
  multipart?: true;
  /** Request body schema: validated before the handler (422 with `{loc, msg, type}` issues) and published in /openapi.json. */
  body?: z.ZodType<B>;
  handler(req: Request, res: Response, context: RequestContext & { body: B }): Promise<unknown>;
}

/** Identity, so a route's body type is inferred from its schema. */
export const route = <B = undefined>(definition: RouteDefinition<B>): RouteDefinition<B> => definition;

// Each route has its own body type; the list holds them all.
export type RouteFactory = (app: AgentHostApp) => RouteDefinition<any>[];
