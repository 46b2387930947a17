-- CONTRACT.md §12.3: a replayed DELETE answers with the Haven-Erasure-Id its first attempt
-- gave. The few response headers that name what a write made are kept with its receipt.
alter table idempotency_keys add column response_headers jsonb;
