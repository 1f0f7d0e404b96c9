export { noAdministratorLogin, type AccessGuard, type RouteAccess } from './access/route-access.js';
export type { RouteDefinition } from './routes/route.js';
export { createServer, type ServerOptions } from './server.js';
export { startHost, type RunningHost } from './start.js';
