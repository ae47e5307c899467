-- The request's vendor and model, kept on its hold so that the record of
-- a request cut by a crash (its hold lapsed) names them.
ALTER TABLE holds ADD COLUMN vendor TEXT NOT NULL DEFAULT '';
ALTER TABLE holds ADD COLUMN model TEXT NOT NULL DEFAULT '';
