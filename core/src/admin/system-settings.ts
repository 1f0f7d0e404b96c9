import { BadRequestError, NotFoundError, safeValidate } from '@agent-host/sdk';
import type { Sequelize } from 'sequelize';
import { z } from 'zod';
import type { HostConfig } from '../config/schema.js';
import type { AdminAuth, AdminPrincipal, RequestOrigin } from './admin-auth.js';
import type { Challenges } from './challenges.js';
import { SystemSettingStore } from './system-setting-store.js';

interface SettingDefinition {
  description: string;
  schema: z.ZodType<unknown>;
  fromConfig(config: HostConfig): unknown;
}

/** Configuration keys an administrator may override at run time, without a restart. */
const SETTINGS: Record<string, SettingDefinition> = {
  'agent.system_prompt_max_length': {
    description: 'Maximum system_prompt length in characters',
    schema: z.number().int().positive().max(1_000_000),
    fromConfig: (c) => c.agent.system_prompt_max_length,
  },
  'agent.judge_prompt_max_length': {
    description: 'Maximum judge_prompt length in characters',
    schema: z.number().int().positive().max(1_000_000),
    fromConfig: (c) => c.agent.judge_prompt_max_length,
  },
};

/** Database-backed system settings; each read sees the latest write of any host instance. */
export class SystemSettings {
  private readonly store: SystemSettingStore;

  constructor(
    db: Sequelize,
    private readonly config: HostConfig,
    private readonly auth: AdminAuth,
    private readonly challenges: Challenges,
  ) {
    this.store = new SystemSettingStore(db);
  }

  async list() {
    const rows = await this.store.all();
    const stored = new Map(rows.map((r) => [r.config_key, r]));
    return {
      items: Object.entries(SETTINGS).map(([key, def]) => {
        const row = stored.get(key);
        return {
          config_key: key,
          description: def.description,
          value: row ? row.value : def.fromConfig(this.config),
          default_value: def.fromConfig(this.config),
          source: row ? 'database' : 'config',
          updated_by: row?.updated_by ?? null,
          updated_at: row?.updated_at.toISOString() ?? null,
        };
      }),
    };
  }

  /** The effective value of a setting: the stored override, else the configuration. */
  async value<T>(key: keyof typeof SETTINGS & string): Promise<T> {
    const row = await this.store.value(key);
    return (row ? row.value : SETTINGS[key]!.fromConfig(this.config)) as T;
  }

  /** Needs a challenge; the change, the spent challenge and the audit record commit together. */
  async update(key: string, value: unknown, principal: AdminPrincipal, origin: RequestOrigin, challengeToken: string | undefined) {
    const definition = SETTINGS[key];
    const refuse = async (reason: string, error: Error): Promise<never> => {
      await this.auth.audit(
        {
          action: 'system_setting.update',
          outcome: 'failure',
          actor_id: principal.admin_user_id,
          target_type: 'system_setting',
          target_id: key,
          payload: { reason },
        },
        origin,
      );
      throw error;
    };
    if (!definition) return refuse('unknown_key', new NotFoundError(`unknown system setting "${key}"`, { code: 'SETTING_NOT_FOUND' }));
    const parsed = safeValidate(definition.schema, value);
    if (!parsed.success) {
      const why = parsed.issues.map((i) => [...i.loc, i.msg].join(' ')).join('; ');
      return refuse('invalid_value', new BadRequestError(`invalid value for ${key}: ${why}`, { code: 'SETTING_VALUE_INVALID' }));
    }
    await this.store.transaction(async (transaction) => {
      await this.challenges.consume(challengeToken, principal, origin, transaction);
      await this.store.put(key, parsed.data, principal.admin_user_id, transaction);
      await this.auth.audit(
        {
          action: 'system_setting.update',
          outcome: 'success',
          actor_id: principal.admin_user_id,
          target_type: 'system_setting',
          target_id: key,
          payload: { value: parsed.data },
        },
        origin,
        transaction,
      );
    });
    return (await this.list()).items.find((item) => item.config_key === key)!;
  }
}
