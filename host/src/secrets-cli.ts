import { AgentHostApp } from '@agent-host/core';

/**
 * `agent-host secrets encrypt`: `plaintext` encrypted under the key the host
 * itself uses (config `secrets.key` / AGENT_HOST_SECRETS_KEY, else the one
 * generated into the data directory), so the host can decrypt it, for example
 * as a catalog entry's `options.api_key_encrypted`.
 */
export function encryptSecret(plaintext: string): string {
  if (plaintext === '') throw new Error('nothing to encrypt: the secret is empty');
  return AgentHostApp.create().secrets().encrypt(plaintext);
}
