-- A counter bumped by every change to a key or a guard policy, so that a
-- running instance polls one row to learn that its cache of keys is
-- stale (a revocation, rotation or new allow list made by another
-- instance or by the CLI on the store).
CREATE TABLE key_generation (
	id  INTEGER PRIMARY KEY CHECK (id = 1),
	gen INTEGER NOT NULL
) STRICT;
INSERT INTO key_generation (id, gen) VALUES (1, 0);

CREATE TRIGGER api_keys_changed AFTER UPDATE ON api_keys
BEGIN
	UPDATE key_generation SET gen = gen + 1 WHERE id = 1;
END;
CREATE TRIGGER api_keys_deleted AFTER DELETE ON api_keys
BEGIN
	UPDATE key_generation SET gen = gen + 1 WHERE id = 1;
END;
CREATE TRIGGER guard_policies_inserted AFTER INSERT ON guard_policies
BEGIN
	UPDATE key_generation SET gen = gen + 1 WHERE id = 1;
END;
CREATE TRIGGER guard_policies_changed AFTER UPDATE ON guard_policies
BEGIN
	UPDATE key_generation SET gen = gen + 1 WHERE id = 1;
END;
CREATE TRIGGER guard_policies_deleted AFTER DELETE ON guard_policies
BEGIN
	UPDATE key_generation SET gen = gen + 1 WHERE id = 1;
END;
