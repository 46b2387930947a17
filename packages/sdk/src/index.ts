// @haven/sdk: the TypeScript client for Haven (CONTRACT.md §10.2).
export type { RateLimit, WithResponse } from './api-call.js';
export { ApiCall } from './api-call.js';
export {
  type AuditChainBroken,
  type AuditChainValid,
  type AuditChainVerification,
  type AuditEntry,
  type AuditHead,
  type VerifyAuditChainOptions,
  verifyAuditChain,
} from './audit-chain.js';
export { Haven, type HavenOptions } from './client.js';
export type { RequestOptions } from './core.js';
export { type WatchOptions, watchDevicePolicy } from './device-agent.js';
export {
  type ErasureReceipt,
  type ErasureReceiptInvalid,
  type ErasureReceiptValid,
  type ErasureReceiptVerification,
  type VerifyErasureReceiptOptions,
  verifyErasureReceipt,
} from './erasure-receipt.js';
export { HavenError } from './errors.js';
export type { Body, Item, OperationId, PageItem, Query, Result } from './operation-types.js';
export { type CursorPage, PagedCall } from './paged-call.js';
export { DEMO_FAMILY_ID } from './sandbox.js';
export { type Signer, signRequest } from './signer.js';
export type { StewardJwk, StewardKeys } from './steward-signature.js';
export { verifyWebhook, WebhookVerificationError } from './webhooks.js';
