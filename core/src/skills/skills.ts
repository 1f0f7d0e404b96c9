import type { SkillBackend } from '@agent-host/sdk';
import type { Sequelize } from 'sequelize';
import type { KeyedRegistry } from '@agent-host/sdk/kernel';
import type { SkillMcpServers } from './mcp-servers.js';
import { SkillAssets } from './skill-assets.js';
import { SkillCallAudits } from './skill-call-audit-store.js';
import { SkillMounts } from './skill-mounts.js';
import { SkillVersions } from './skill-versions.js';
import { TurnSkills, type SkillTurn } from './turn-skills.js';

export interface SkillsDeps {
  db: Sequelize;
  backends: KeyedRegistry<SkillBackend>;
  servers: SkillMcpServers;
}

/** The skills domain (spec 2.8, 3.3, 4.12): assets, versions, mounts, call audits and the per-turn skill handle. */
export class Skills {
  readonly assets: SkillAssets;
  readonly versions: SkillVersions;
  readonly mounts: SkillMounts;
  readonly calls: SkillCallAudits;

  constructor(private readonly deps: SkillsDeps) {
    this.assets = new SkillAssets(deps.db);
    this.versions = new SkillVersions(deps.db, this.assets, deps.backends, deps.servers);
    this.mounts = new SkillMounts(deps.db, this.assets, this.versions, deps.servers);
    this.calls = new SkillCallAudits(deps.db);
  }

  /** The skill handle of one chat turn. */
  turnSkills(turn: SkillTurn): TurnSkills {
    const { backends, servers } = this.deps;
    return new TurnSkills({ mounts: this.mounts, audits: this.calls, backends, servers }, turn);
  }
}
