import type { AgentHostApp } from '@agent-host/core';
import type { Request, Response } from 'restify';
import type { RequestContext, RouteAccess } from '../access/route-access.js';

/** One HTTP route: the route files export lists of these; the server mounts them behind the access guard. */
export interface RouteDefinition {
  method: 'get' | 'post' | 'put' | 'patch' | 'del';
  path: string;
  access: RouteAccess;
  summary: string;
  handler(req: Request, res: Response, context: RequestContext): Promise<unknown>;
}

export type RouteFactory = (app: AgentHostApp) => RouteDefinition[];
