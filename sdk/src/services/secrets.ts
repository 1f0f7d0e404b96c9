/**
 * Symmetric encryption for secrets at rest (AES-256-GCM under the host's
 * configured key). Ciphertexts are self-describing strings.
 * @public
 */
export interface SecretsService {
  /** Encrypts a UTF-8 string. */
  encrypt(plaintext: string): string;
  /** Decrypts what {@link SecretsService.encrypt} produced; throws on tampering. */
  decrypt(ciphertext: string): string;
}
