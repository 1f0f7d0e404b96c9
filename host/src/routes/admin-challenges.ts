import { z } from 'zod';
import { route, type RouteFactory } from './route.js';

const verifyBody = z.object({ nonce: z.string().min(1), password: z.string().min(1).max(1024) }).strict();

export const adminChallengeRoutes: RouteFactory = (app) => {
  const challenges = app.challenges!;
  return [
    {
      method: 'post',
      path: '/admin/auth/challenges',
      access: { login: true },
      summary: 'Create a one-time challenge for a sensitive operation',
      handler: async (_req, _res, { principal, origin }) => challenges.create(principal!, origin),
    },
    route({
      method: 'post',
      path: '/admin/auth/challenges/:challenge_id/verify',
      access: { login: true },
      summary: 'Re-enter the password; returns a short-lived single-use challenge_token (a failure burns the challenge)',
      body: verifyBody,
      handler: async (req, _res, { principal, origin, body: { nonce, password } }) =>
        challenges.verify(String(req.params.challenge_id), nonce, password, principal!, origin),
    }),
  ];
};
