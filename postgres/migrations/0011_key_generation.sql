-- A counter bumped by every change to a key or a guard policy, so that a
-- running instance polls one row to learn that its cache of keys is
-- stale (a revocation, rotation or new allow list made by another
-- instance or by the CLI on the store).
CREATE TABLE key_generation (
	id  INTEGER PRIMARY KEY CHECK (id = 1),
	gen BIGINT NOT NULL
);
INSERT INTO key_generation (id, gen) VALUES (1, 0);

CREATE FUNCTION bump_key_generation() RETURNS trigger AS $$
BEGIN
	UPDATE key_generation SET gen = gen + 1 WHERE id = 1;
	RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER api_keys_changed AFTER UPDATE OR DELETE ON api_keys
	FOR EACH STATEMENT EXECUTE FUNCTION bump_key_generation();
CREATE TRIGGER guard_policies_changed AFTER INSERT OR UPDATE OR DELETE ON guard_policies
	FOR EACH STATEMENT EXECUTE FUNCTION bump_key_generation();
