-- Quiet when idle (issue 22): instances hear of a new trust-list issue from the transaction
-- that writes it (LISTEN/NOTIFY), instead of each checking the latest issue number every
-- second. Sent by the database, so every writer (a server, an operator command) notifies.
create function haven_trust_list_notify() returns trigger
language plpgsql as $$
begin
  perform pg_notify('haven_trust_list', '');
  return null;
end $$;

create trigger haven_trust_list_notify
  after insert on trust_list_issues
  for each statement execute function haven_trust_list_notify();
