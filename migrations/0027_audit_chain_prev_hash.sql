-- docs/decisions.md "One chain per family and per org": an entry is appended in one statement
-- that moves the chain's tip and computes the entry's hash in the database; the tip keeps the
-- newest entry's `prev_hash` too, which that statement reads back for the entry's row (an
-- UPDATE returns the values it set, not the ones it replaced).
alter table audit_chains add column last_prev_hash text not null
  default '0000000000000000000000000000000000000000000000000000000000000000';
