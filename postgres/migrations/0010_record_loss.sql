-- What a settle could not debit (the charge beyond the hold and the
-- available balance at that moment: the operator's loss), and the part of
-- the charge on the vendor cost that the optimizer's directive accounts
-- for (the caller does not pay it).
ALTER TABLE records ADD COLUMN loss BIGINT NOT NULL DEFAULT 0;
ALTER TABLE records ADD COLUMN directive_share BIGINT NOT NULL DEFAULT 0;
