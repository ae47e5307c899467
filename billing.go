package gw

// The billing vocabulary the proxy and package billing share.

// Quote is the price of one request: the vendor cost, the charge to the
// caller, and a note for the log when a policy other than the plain rate
// applied (a long-context tier, the OpenRouter reported cost or its
// fallback).
type Quote struct {
	Cost, Charge Money
	// DirectiveShare is the part of the charge on the whole vendor cost
	// that the optimizer's directive accounts for: Cost is what the
	// vendor bills (the directive's tokens included), Charge what the
	// caller pays, and the exact cost x 1.09, rounded once, less
	// DirectiveShare is Charge.
	DirectiveShare Money
	Note           string
}

// HoldRequest is what a hold must cover: one exact vendor body, read as
// the vendor reads it.
type HoldRequest struct {
	Vendor, Model string
	// BodyBytes is the size of the request body; the prompt is
	// estimated from it (billing.HoldBytesPerToken).
	BodyBytes int
	// MaxOutput is the per-choice output limit the vendor will honour
	// (the largest of its output-limit fields), 0 when the body has
	// none; above the model's maximum it counts as the maximum.
	MaxOutput int64
	// Choices is the number of answers the vendor generates (n,
	// candidateCount); less than 1 counts as 1.
	Choices int64
	// Available is the account's available balance when known, else
	// negative. With it, the hold is sized to fit (billing.Biller.Hold).
	Available Money
	// CallerLimit is true when the caller set the output limit itself;
	// only without one may the hold choose a smaller limit.
	CallerLimit bool
	// Hosted is the most the request may use beyond tokens: the service
	// tier and fast mode it asks for and each hosted tool's call limit.
	// The hold covers them at the card's prices (package billing).
	Hosted Hosted
}

// HoldPlan is a sized hold.
type HoldPlan struct {
	Amount Money
	// MaxOutput is the per-choice output the hold covers, 0 when the
	// model's output cannot be bounded (OpenRouter). OutputBound is
	// MaxOutput x choices: the most output tokens the vendor may bill.
	MaxOutput, OutputBound int64
	// Imposed is true when MaxOutput is below the model's maximum because
	// the balance cannot cover more: the gateway must send MaxOutput to
	// the vendor as the request's output limit.
	Imposed bool
}
