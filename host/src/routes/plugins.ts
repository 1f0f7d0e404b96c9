import { z } from 'zod';
import { listOf } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const loadedPlugin = z.object({
  id: z.string(),
  packageName: z.string(),
  version: z.string(),
  origin: z.enum(['first-party', 'package', 'path']),
  location: z.string(),
  sdk: z.string().describe('The SDK range the plugin declares'),
  description: z.string(),
  registered: z.record(z.string(), z.array(z.string())).describe('Keys registered, by extension point'),
  replaced: z
    .record(z.string(), z.record(z.string(), z.string()))
    .describe('Keys it registered as replaceable defaults that another plugin serves instead: by extension point, key to that plugin'),
  health: z.array(z.object({ name: z.string(), state: z.string(), message: z.string().nullable() })),
});

export const pluginRoutes: RouteFactory = (_domains, app) => [
  route({
    method: 'get',
    path: '/plugins',
    access: { permission: 'dashboard.read' },
    summary: 'Loaded plugins: id, version, origin, location, SDK range, what each registered and its health checks',
    success: { status: 200, description: 'The loaded plugins, in load order', schema: listOf(loadedPlugin) },
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
  }),
];
