package sqlstore

import (
	"errors"
	"fmt"
	"time"

	gw "github.com/gwlabs/gateway"
)

// CheckHold refuses a hold that cannot be placed (no id, account or
// expiry; a negative amount) and dates one without a time at now.
func CheckHold(h *gw.Hold, now func() time.Time) error {
	if h.ID == "" || h.AccountID == "" {
		return errors.New("place hold: id and account id are required")
	}
	if h.Amount < 0 {
		return fmt.Errorf("place hold: negative amount %d", h.Amount)
	}
	if h.ExpiresAt.IsZero() {
		return errors.New("place hold: no expiry")
	}
	if h.At.IsZero() {
		h.At = now()
	}
	return nil
}

// WithDefaults returns a copy of r with its defaults filled in: the hold
// id as its request id, now as its time.
func WithDefaults(r *gw.Record, holdID string, now func() time.Time) *gw.Record {
	c := *r
	if c.RequestID == "" {
		c.RequestID = holdID
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = now()
	}
	return &c
}

// CheckReview refuses a verdict other than false positive or confirmed
// and dates a review without a time at now.
func CheckReview(r *gw.IncidentReview, now func() time.Time) error {
	if r.Verdict != gw.ReviewFalsePositive && r.Verdict != gw.ReviewConfirmed {
		return fmt.Errorf("review incident: verdict %q: want %s or %s", r.Verdict, gw.ReviewFalsePositive, gw.ReviewConfirmed)
	}
	if r.ReviewedAt.IsZero() {
		r.ReviewedAt = now()
	}
	return nil
}
