/** How many access tokens an instance keeps verified; the oldest verified are forgotten first. */
const VERIFIED_TOKEN_CAPACITY = 10_000;

/** What `AdminAuth.authenticate` reads of a verified access token. */
export interface VerifiedClaims {
  sid: string;
  ver: number;
  /** Its `exp`, in milliseconds. */
  expiresAtMs: number;
}

/**
 * Access tokens this instance verified, by their text, until they expire: a token's signature and claims never
 * change, and jose verifies an HS256 signature through WebCrypto, about 85 µs of CPU and a thread-pool job on every
 * administrator request. Only the signature check is kept: whether the token's session is still valid is read on
 * every request all the same.
 */
export class VerifiedTokens {
  private readonly tokens = new Map<string, VerifiedClaims>();

  constructor(private readonly capacity = VERIFIED_TOKEN_CAPACITY) {}

  /** The claims of a token verified before and not yet expired at `nowMs`. */
  get(token: string, nowMs = Date.now()): VerifiedClaims | undefined {
    const claims = this.tokens.get(token);
    if (claims === undefined || nowMs < claims.expiresAtMs) return claims;
    this.tokens.delete(token);
    return undefined;
  }

  add(token: string, claims: VerifiedClaims): void {
    this.tokens.set(token, claims);
    // A Map keeps insertion order: its first key is the token verified longest ago.
    if (this.tokens.size > this.capacity) this.tokens.delete(this.tokens.keys().next().value!);
  }
}
