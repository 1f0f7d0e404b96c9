import { SKILL_STATUSES, skillCreateSchema, skillUpdateSchema, versionCreateSchema, versionUpdateSchema } from '@agent-host/core';
import { z } from 'zod';
import { skill, skillVersion } from '../schemas/skills.js';
import { pageOf, pagingFields } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const skillQuery = z.object({ ...pagingFields, status: z.enum(SKILL_STATUSES).optional() }).strict();
const versionQuery = z
  .object({
    ...pagingFields,
    released_only: z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true'),
  })
  .strict();

const versionNotFound = { 404: 'No such skill, or no such version of it (SKILL_NOT_FOUND, SKILL_VERSION_NOT_FOUND)' };
const backendUnavailable = 'No enabled plugin provides its backend, or its MCP server is not active (SKILL_BACKEND_UNAVAILABLE)';

/** Skill assets and their versions (spec 4.12). */
export const skillRoutes: RouteFactory<'skills'> = (domains) => {
  const skillId = (params: Record<string, string>) => String(params.skill_id);
  const versionId = (params: Record<string, string>) => String(params.version_id);
  return [
    route({
      method: 'post',
      path: '/skills',
      access: { permission: 'skills.write' },
      summary: 'Create a skill asset (its name is the tool name runtimes show the model)',
      success: { status: 201, description: 'The new skill', schema: skill },
      refusals: { 409: 'A skill with this name exists (SKILL_EXISTS)' },
      body: skillCreateSchema,
      example: { name: 'track_parcel', description: 'Looks up where a parcel is from its tracking number' },
      handler: async (_req, res, { operation, body }) => {
        res.status(201);
        return domains.skills.assets.create(body, operation);
      },
    }),
    route({
      method: 'get',
      path: '/skills',
      access: { permission: 'skills.read' },
      summary: 'Skills, newest first, optionally by status',
      query: skillQuery,
      success: { status: 200, description: 'A page of skills', schema: pageOf(skill) },
      handler: async (_req, _res, { query }) => domains.skills.assets.list(query),
    }),
    route({
      method: 'get',
      path: '/skills/:skill_id',
      access: { permission: 'skills.read' },
      summary: 'One skill',
      success: { status: 200, description: 'The skill', schema: skill },
      handler: async (req) => domains.skills.assets.get(skillId(req.params)),
    }),
    route({
      method: 'patch',
      path: '/skills/:skill_id',
      access: { permission: 'skills.write' },
      summary: 'Update a skill (name, description, status)',
      body: skillUpdateSchema,
      success: { status: 200, description: 'The skill as changed', schema: skill },
      refusals: { 409: 'A skill with this name exists (SKILL_EXISTS)' },
      handler: async (req, _res, { operation, body }) => domains.skills.assets.update(skillId(req.params), body, operation),
    }),
    route({
      method: 'post',
      path: '/skills/:skill_id/versions',
      access: { permission: 'skills.write' },
      summary: 'Create a version: a draft, unless is_released=true releases it at once under the release rules',
      success: { status: 201, description: 'The new version', schema: skillVersion },
      refusals: { 409: `Released at once, but: ${backendUnavailable}` },
      body: versionCreateSchema,
      handler: async (req, res, { operation, body }) => {
        res.status(201);
        return domains.skills.versions.create(skillId(req.params), body, operation);
      },
    }),
    route({
      method: 'get',
      path: '/skills/:skill_id/versions',
      access: { permission: 'skills.read' },
      summary: "The skill's versions, newest first; released_only=true for released ones",
      query: versionQuery,
      success: { status: 200, description: 'A page of versions', schema: pageOf(skillVersion) },
      handler: async (req, _res, { query }) => domains.skills.versions.list(skillId(req.params), query),
    }),
    route({
      method: 'get',
      path: '/skills/:skill_id/versions/:version_id',
      access: { permission: 'skills.read' },
      summary: 'One skill version',
      success: { status: 200, description: 'The version', schema: skillVersion },
      refusals: versionNotFound,
      handler: async (req) => domains.skills.versions.get(skillId(req.params), versionId(req.params)),
    }),
    route({
      method: 'patch',
      path: '/skills/:skill_id/versions/:version_id',
      access: { permission: 'skills.write' },
      summary: 'Edit a draft version in place (a released version is immutable: 409)',
      body: versionUpdateSchema,
      success: { status: 200, description: 'The draft as changed', schema: skillVersion },
      refusals: { ...versionNotFound, 409: 'The version is released and immutable (SKILL_VERSION_RELEASED)' },
      handler: async (req, _res, { operation, body }) => domains.skills.versions.update(skillId(req.params), versionId(req.params), body, operation),
    }),
    route({
      method: 'post',
      path: '/skills/:skill_id/versions/:version_id/release',
      access: { permission: 'skills.write' },
      summary: 'Release a draft; an mcp version needs its backend_ref_id server active (else 409)',
      success: { status: 200, description: 'The released version', schema: skillVersion },
      refusals: { ...versionNotFound, 409: `Already released (SKILL_VERSION_RELEASED); or: ${backendUnavailable}` },
      handler: async (req, _res, { operation }) => domains.skills.versions.release(skillId(req.params), versionId(req.params), operation),
    }),
  ];
};
