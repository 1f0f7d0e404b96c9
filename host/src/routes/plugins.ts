import type { RouteFactory } from './route.js';

export const pluginRoutes: RouteFactory = (app) => [
  {
    method: 'get',
    path: '/plugins',
    access: { permission: 'dashboard.read' },
    summary: 'Loaded plugins: id, version, origin, location, SDK range and what each registered',
    handler: async () => ({ items: app.kernel.plugins() }),
  },
];
