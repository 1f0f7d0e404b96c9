import { getEncoding, type Tiktoken } from 'js-tiktoken';

let encoder: Tiktoken | undefined;

/** Local token estimate with the cl100k ranks js-tiktoken ships (offline). */
export function estimateTokens(text: string): number | undefined {
  try {
    encoder ??= getEncoding('cl100k_base');
    return encoder.encode(text).length;
  } catch {
    return undefined;
  }
}
