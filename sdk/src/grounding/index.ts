export { DEFAULT_GROUNDING_TEXTS, GROUNDED_ANSWER_SCHEMA, createGroundingHandle, type GroundingHandleOptions, type GroundingTexts } from './handle.js';
