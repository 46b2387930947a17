-- Steward key rotation (CONTRACT.md §9). The public half of every steward key that has signed
-- a trust-list issue, so /.well-known/ocss/keys can serve the current key and those retired
-- less than 30 days ago from every instance, whatever key that instance was started with.
create table steward_keys (
  kid text primary key,
  did text not null,
  -- The public key as a JWK (kty OKP, crv Ed25519, x, kid, use sig, alg).
  public_jwk jsonb not null,
  first_signed_at timestamptz not null,
  -- Null while it signs the latest issue; set when another key signs one.
  retired_at timestamptz
);
create unique index steward_keys_one_current on steward_keys ((retired_at is null))
  where retired_at is null;

-- The key_id (<did>#<kid>) that signed each issue.
alter table trust_list_issues add column key_id text;
update trust_list_issues set key_id = (body::jsonb) ->> 'key_id';
alter table trust_list_issues alter column key_id set not null;

-- The key that signed the latest issue so far is the current one.
insert into steward_keys (kid, did, public_jwk, first_signed_at)
select e.public_jwk ->> 'kid', e.did, e.public_jwk, i.issued_at
from trust_list_issues i
join ocss_entries e on e.key_id = i.key_id and e.entity = 'steward'
where i.number = (select max(number) from trust_list_issues);
