import { ForbiddenError } from '@agent-host/sdk';
import type { AdminPrincipal } from '../admin/admin-auth.js';

/** Who acts on a session: an operator id and name, the administrator behind it, and the channel used. */
export interface Operator {
  operator_id: string;
  operator_name: string | null;
  admin_user_id: string | null;
  channel: 'rest' | 'websocket';
  client_ip?: string | null;
}

/**
 * The operator an administrator acts as, over REST and WebSocket alike. The
 * operator is the administrator: `operator_id` may only name the caller's own
 * `admin_user_id`, so nobody acts as another operator's takeover by passing
 * that operator's id.
 */
export function operatorFor(
  principal: AdminPrincipal,
  channel: Operator['channel'],
  claimed: { operator_id?: string | null; operator_name?: string | null; client_ip?: string | null } = {},
): Operator {
  if (claimed.operator_id && claimed.operator_id !== principal.admin_user_id) {
    throw new ForbiddenError(`operator_id must be your own administrator id (${principal.admin_user_id}), not ${claimed.operator_id}`, {
      code: 'OPERATOR_MISMATCH',
    });
  }
  return {
    operator_id: principal.admin_user_id,
    operator_name: claimed.operator_name || principal.display_name || principal.username,
    admin_user_id: principal.admin_user_id,
    channel,
    client_ip: claimed.client_ip ?? null,
  };
}
