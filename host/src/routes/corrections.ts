import { correctionUpdateSchema } from '@agent-host/core';
import { z } from 'zod';
import { correction, correctionPublication } from '../schemas/corrections.js';
import { pageOf, pagingFields } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const ledgerQuery = z.object(pagingFields).strict();
const turnNotFound = 'No such turn in this session (TURN_NOT_FOUND)';

/** Managed corrections of AI turns and the publication ledger of a source (spec 2.3, 3.2, 4.4). */
export const correctionRoutes: RouteFactory<'knowledge'> = (domains) => {
  const turn = (params: Record<string, string>) => [String(params.session_id), String(params.turn_id)] as const;
  return [
    route({
      method: 'get',
      path: '/sessions/:session_id/turns/:turn_id/correction',
      access: { permission: 'conversations.read', alsoRequires: ['knowledge.read'] },
      summary: 'The turn\'s correction draft (status "none" with the original texts before the first save)',
      success: { status: 200, description: 'The correction', schema: correction },
      refusals: { 404: turnNotFound, 409: 'The turn has no AI answer, or no agent answered it (TURN_NOT_CORRECTABLE)' },
      handler: async (req) => domains.knowledge.corrections.get(...turn(req.params)),
    }),
    route({
      method: 'patch',
      path: '/sessions/:session_id/turns/:turn_id/correction',
      access: { permission: 'knowledge.write' },
      summary: 'Save the correction draft: corrected_question and corrected_answer required; each save is a new revision_number',
      body: correctionUpdateSchema,
      success: { status: 200, description: 'The correction as saved, a new revision', schema: correction },
      refusals: { 404: turnNotFound, 409: 'The turn has no AI answer, or no agent answered it (TURN_NOT_CORRECTABLE)' },
      handler: async (req, _res, { operation, body }) => domains.knowledge.corrections.update(...turn(req.params), body, operation),
    }),
    route({
      method: 'post',
      path: '/sessions/:session_id/turns/:turn_id/correction/publish',
      access: { permission: 'knowledge.write' },
      summary: "Publish the draft into the agent's managed_correction source; status publishing until its ingestion settles",
      success: { status: 202, description: 'Accepted: the revision is published in the background', schema: correction },
      refusals: {
        404: turnNotFound,
        409: 'No draft to publish (TURN_NOT_CORRECTABLE), or this revision is already publishing or published, or changed meanwhile (CORRECTION_CONFLICT)',
      },
      handler: async (req, res, { operation }) => {
        res.status(202);
        return domains.knowledge.corrections.publish(...turn(req.params), operation);
      },
    }),
    route({
      method: 'get',
      path: '/knowledge-sources/:source_id/corrections',
      access: { permission: 'knowledge.read', alsoRequires: ['conversations.read'] },
      summary: 'Publication ledger of a managed_correction source, newest first',
      query: ledgerQuery,
      success: { status: 200, description: 'A page of publications', schema: pageOf(correctionPublication) },
      refusals: { 404: 'No such knowledge source (KNOWLEDGE_SOURCE_NOT_FOUND)' },
      handler: async (req, _res, { query }) => domains.knowledge.corrections.ledger(String(req.params.source_id), query),
    }),
  ];
};
