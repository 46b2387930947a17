-- CONTRACT.md §12.4: the daily purge finds what fell out of retention by indexes, never by a
-- scan. Each record's time column is, with its id, the order the real clock's run walks
-- (keyset, so a row it cannot remove yet is passed over once a run); a family's or an org's
-- own purge reads by its owner and the same column (docs/decisions.md "Retention: what the
-- daily purge removes, and how it finds it").

-- Viewing history: a family's purge uses viewing_history_child (child_id, watched_at desc).
create index viewing_history_watched on viewing_history (watched_at, id);

-- Device reports, by when the device says it reported.
create index device_reports_reported on device_reports (reported_at, id);
create index device_reports_child_reported on device_reports (child_id, reported_at);

-- Finished webhook deliveries only (a pending attempt is kept whatever its age); a family's
-- purge uses webhook_deliveries_webhook (webhook_id, created_at desc, seq desc).
create index webhook_deliveries_finished on webhook_deliveries (created_at, id)
  where status <> 'pending';

-- Usage rollups: an org's purge uses developer_usage_org_hour (org_id, hour desc).
create index developer_usage_hour on developer_usage (hour, id);

-- Audit entries: a chain's oldest prefix is read by its unique (chain_id, seq).
create index audit_entries_occurred on audit_entries (occurred_at, id);

-- Erasure receipts (migration 0024), completed ones only (an erasure under way keeps its
-- receipt): the walk, an org's purge, and a test clock's purge of the receipts it dates.
create index erasure_receipts_completed on erasure_receipts (requested_at, id)
  where completed_at is not null;
create index erasure_receipts_org_completed on erasure_receipts (org_id, requested_at)
  where completed_at is not null;
create index erasure_receipts_test_clock on erasure_receipts (test_clock_id, requested_at)
  where test_clock_id is not null and completed_at is not null;
