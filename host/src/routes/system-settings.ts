import type { RouteFactory } from './route.js';

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
    {
      method: 'patch',
      path: '/admin/system-settings/:config_key',
      access: { permission: 'system_settings.write', challenge: true },
      summary: 'Change a setting (body {"value": ...}); takes effect without restart',
      handler: async (req, _res, { principal, origin, challengeToken }) =>
        settings.update(String(req.params.config_key), req.body, principal!, origin, challengeToken),
    },
  ];
};
