-- The instance running the enforcement that holds a partner profile's lease: a lease whose
-- instance stopped beating (instance_heartbeats) is free at once, so the run taken up again
-- after a kill does not wait for the end of the dead run's lease.
alter table partner_managed_state add column lease_instance text;
