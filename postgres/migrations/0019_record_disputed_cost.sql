-- The vendor's cost of the prompt tokens it reported beyond the gateway's
-- own upper bound of what it sent: not charged to the account, the
-- operator's to take up with the vendor.
ALTER TABLE records ADD COLUMN disputed_cost BIGINT NOT NULL DEFAULT 0;
