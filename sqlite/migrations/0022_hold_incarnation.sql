-- The instance (a stable name) and incarnation (random per process
-- start) that placed a hold: a restarted instance releases the holds of
-- its earlier incarnations at start. Empty: placed before this column,
-- or by a store that was given no incarnation; left to the lease.
ALTER TABLE holds ADD COLUMN instance TEXT NOT NULL DEFAULT '';
ALTER TABLE holds ADD COLUMN incarnation TEXT NOT NULL DEFAULT '';
CREATE INDEX holds_instance ON holds (instance, incarnation);
