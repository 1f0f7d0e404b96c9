import type { RouteFactory } from './route.js';

export const pluginRoutes: RouteFactory = (app) => [
  {
    method: 'get',
    path: '/plugins',
    access: { permission: 'dashboard.read' },
    summary: 'Loaded plugins: id, version, origin, location, SDK range, what each registered and its health checks',
    handler: async () => {
      // A plugin's own checks are registered under `<plugin id>.<name>` (coreServices.health).
      const checks = await app.health.run(2000);
      return {
        items: app.kernel.plugins().map((plugin) => ({
          ...plugin,
          health: checks
            .filter(({ name }) => name.startsWith(`${plugin.id}.`))
            .map(({ name, result }) => ({ name: name.slice(plugin.id.length + 1), state: result.state, message: result.message ?? null })),
        })),
      };
    },
  },
];
