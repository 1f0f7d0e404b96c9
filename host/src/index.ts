export { type AccessGuard, type RequestContext, type RouteAccess } from './access/route-access.js';
export type { RouteDefinition } from './routes/route.js';
export { createServer } from './server.js';
export { startHost, type RunningHost } from './start.js';
export { buildOpenApiDocument, openApiPath, type OpenApiDocument } from './openapi/openapi-document.js';
