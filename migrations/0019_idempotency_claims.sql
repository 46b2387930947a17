-- An in-flight claim names the attempt that holds it (claim_token) and the instance running
-- that attempt (claimed_by). The attempt records its answer, in the transaction of its
-- writes, only while its token still holds the claim; a claim whose instance stopped beating
-- (instance_heartbeats) is taken over without waiting for the end of its lease.
alter table idempotency_keys
  add column claim_token text,
  add column claimed_by text;
