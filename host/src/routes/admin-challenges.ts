import { z } from 'zod';
import { timestamp } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const challenge = z.object({
  challenge_id: z.string().uuid(),
  nonce: z.string().describe('Send it back with the password'),
  expires_at: timestamp,
});
const challengeToken = z.object({
  challenge_token: z.string().describe('Single use: send it in the challenge header of the sensitive operation'),
  expires_at: timestamp,
});
const verifyBody = z.object({ nonce: z.string().min(1), password: z.string().min(1).max(1024) }).strict();

export const adminChallengeRoutes: RouteFactory<'challenges'> = (domains) => {
  return [
    route({
      method: 'post',
      path: '/admin/auth/challenges',
      access: { login: true },
      summary: 'Create a one-time challenge for a sensitive operation',
      success: { status: 200, description: 'The challenge, pending until verified', schema: challenge },
      refusals: {
        403: 'An API token cannot take challenges (CHALLENGE_REQUIRED)',
        429: 'Too many challenges for this session; see Retry-After (TOO_MANY_CHALLENGES)',
      },
      handler: async (_req, _res, { principal, origin }) => domains.challenges.create(principal!, origin),
    }),
    route({
      method: 'post',
      path: '/admin/auth/challenges/:challenge_id/verify',
      access: { login: true },
      summary: 'Re-enter the password; returns a short-lived single-use challenge_token (a failure burns the challenge)',
      body: verifyBody,
      success: { status: 200, description: 'The challenge token', schema: challengeToken },
      refusals: {
        403: 'Wrong password or nonce, or the challenge is unknown, expired, used or not yours; the challenge is burned (CHALLENGE_REFUSED)',
        429: 'Too many failed password checks: the session is ended (TOO_MANY_LOGIN_FAILURES)',
      },
      handler: async (req, _res, { principal, origin, body: { nonce, password } }) =>
        domains.challenges.verify(String(req.params.challenge_id), nonce, password, principal!, origin),
    }),
  ];
};
