import { z } from 'zod';
import { route, type RouteFactory } from './route.js';

const settingBody = z.object({ value: z.unknown() }).strict();

export const systemSettingRoutes: RouteFactory = (app) => {
  const settings = app.systemSettings!;
  return [
    {
      method: 'get',
      path: '/admin/system-settings',
      access: { permission: 'system_settings.read' },
      summary: 'Database-backed system settings with their effective values',
      handler: async () => settings.list(),
    },
    route({
      method: 'patch',
      path: '/admin/system-settings/:config_key',
      access: { permission: 'system_settings.write', challenge: true },
      summary: 'Change a setting; takes effect without restart',
      body: settingBody,
      handler: async (req, _res, { principal, origin, challengeToken, body }) =>
        settings.update(String(req.params.config_key), body.value, principal!, origin, challengeToken),
    }),
  ];
};
