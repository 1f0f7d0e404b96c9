import { z } from 'zod';
import { listOf, timestamp } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const settingBody = z.object({ value: z.unknown() }).strict();
const setting = z
  .object({
    config_key: z.string(),
    description: z.string(),
    value: z.unknown().describe('The effective value'),
    default_value: z.unknown().describe('The value the configuration gives'),
    source: z.enum(['database', 'config']),
    updated_by: z.string().uuid().nullable(),
    updated_at: timestamp.nullable(),
  })
  .meta({ id: 'SystemSetting' });

export const systemSettingRoutes: RouteFactory<'systemSettings'> = (domains) => {
  return [
    route({
      method: 'get',
      path: '/admin/system-settings',
      access: { permission: 'system_settings.read' },
      summary: 'Database-backed system settings with their effective values',
      success: { status: 200, description: 'Every setting', schema: listOf(setting) },
      handler: async () => domains.systemSettings.list(),
    }),
    route({
      method: 'patch',
      path: '/admin/system-settings/:config_key',
      access: { permission: 'system_settings.write', challenge: true },
      summary: 'Change a setting; takes effect without restart',
      body: settingBody,
      success: { status: 200, description: 'The setting as changed', schema: setting },
      refusals: { 400: 'The value is not valid for this setting (SETTING_VALUE_INVALID)' },
      handler: async (req, _res, { principal, origin, challengeToken, body }) =>
        domains.systemSettings.update(String(req.params.config_key), body.value, principal!, origin, challengeToken),
    }),
  ];
};
