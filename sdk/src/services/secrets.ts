/**
 * Symmetric encryption for secrets at rest (AES-256-GCM under the host's
 * configured key). Ciphertexts are self-describing strings.
 * @public
 */
export interface SecretsService {
  /**
   * Encrypts a UTF-8 string under the active key. `context` (for example `"table:row:column"`) is bound to the
   * ciphertext: it decrypts only with the same context, so a value copied elsewhere does not (since SDK 1.3.0).
   */
  encrypt(plaintext: string, context?: string): string;
  /** Decrypts what {@link SecretsService.encrypt} produced with the same `context`; throws on tampering. */
  decrypt(ciphertext: string, context?: string): string;
}
