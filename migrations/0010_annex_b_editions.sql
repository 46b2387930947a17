-- Frozen editions of Annex B, the rule registry (CONTRACT.md §9). `npm run annex-b -- freeze`
-- writes one row; nothing changes it afterwards. `artifact` is the canonical JSON (RFC 8785)
-- byte for byte as served (text, not jsonb: jsonb would reorder keys and change the bytes
-- the hash covers); `sha256` is the hex digest of its UTF-8 bytes, served as the ETag.
-- Numbers start at 1 and rise by one (the freeze takes them under an advisory lock).
create table annex_b_editions (
  edition integer primary key check (edition >= 1),
  frozen_at timestamptz not null,
  artifact text not null,
  sha256 text not null check (sha256 ~ '^[0-9a-f]{64}$')
);

-- Immutable means immutable: a frozen edition is never updated or deleted, whoever asks.
create function annex_b_editions_immutable() returns trigger
language plpgsql as $$
begin
  raise exception 'annex B edition % is frozen and cannot change', old.edition;
end;
$$;

create trigger annex_b_editions_immutable
  before update or delete on annex_b_editions
  for each row execute function annex_b_editions_immutable();
