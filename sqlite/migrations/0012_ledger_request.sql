-- A request is charged at most once through its record: a charge's ledger
-- entry and its record are written in one transaction, and the record's
-- request id is unique. The ledger's own unique index on the request id
-- repeated that check at the cost of one more b-tree written per charge;
-- nothing looks a ledger entry up by its request id.
DROP INDEX ledger_request;
