package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/groupcommit"
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

// withDefaults returns a copy of r with its defaults filled in: the hold
// id as its request id, now as its time.
func withDefaults(r *gw.Record, holdID string, now func() time.Time) *gw.Record {
	c := *r
	if c.RequestID == "" {
		c.RequestID = holdID
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = now()
	}
	return &c
}

// SettleOp is the group-commit call that settles the hold with r: it
// refuses a nil record or a negative charge, and writes a copy of r with
// its defaults filled in (Op.Rec), which the commit sets the charge, loss
// and note of.
func SettleOp(holdID string, r *gw.Record, now func() time.Time) (*groupcommit.Op, error) {
	if r == nil {
		return nil, errors.New("settle: nil record")
	}
	if r.Charge < 0 {
		return nil, fmt.Errorf("settle: negative charge %d", r.Charge)
	}
	return &groupcommit.Op{Kind: groupcommit.Settle, ID: holdID, Rec: withDefaults(r, holdID, now)}, nil
}

// ReleaseOp is the group-commit call that releases the hold, writing r
// (when not nil) with a zero charge.
func ReleaseOp(holdID string, r *gw.Record, now func() time.Time) *groupcommit.Op {
	o := &groupcommit.Op{Kind: groupcommit.Release, ID: holdID}
	if r != nil {
		o.Rec = withDefaults(r, holdID, now)
		o.Rec.Charge = 0
	}
	return o
}

// LogOp is the group-commit call that writes the record of a request that
// placed no hold.
func LogOp(r *gw.Record, now func() time.Time) (*groupcommit.Op, error) {
	if r == nil || r.RequestID == "" {
		return nil, errors.New("log: record without request id")
	}
	return &groupcommit.Op{Kind: groupcommit.Log, Rec: withDefaults(r, "", now)}, nil
}

// Submit hands a group-commit call to the store's committer and waits
// for it to be durable; what names the call in errors.
type Submit func(ctx context.Context, o *groupcommit.Op, what string) error

// Settle settles the hold with r through submit and sets r.Charge, r.Loss
// and r.Note to what the commit wrote.
func Settle(ctx context.Context, holdID string, r *gw.Record, now func() time.Time, submit Submit) error {
	o, err := SettleOp(holdID, r, now)
	if err != nil {
		return err
	}
	if err := submit(ctx, o, "settle"); err != nil {
		return err
	}
	r.Charge, r.Loss, r.Note = o.Rec.Charge, o.Rec.Loss, o.Rec.Note
	return nil
}

// Release releases the hold through submit, writing r (when not nil)
// with a zero charge.
func Release(ctx context.Context, holdID string, r *gw.Record, now func() time.Time, submit Submit) error {
	return submit(ctx, ReleaseOp(holdID, r, now), "release")
}

// Log writes the record of a request that placed no hold through submit.
func Log(ctx context.Context, r *gw.Record, now func() time.Time, submit Submit) error {
	o, err := LogOp(r, now)
	if err != nil {
		return err
	}
	return submit(ctx, o, "log")
}

// RenewHold moves a live hold's expiry (a row of the holds table) to
// expiresAt, never earlier. A hold past its expiry, swept or finished is
// ErrNotFound.
func (q Queries) RenewHold(ctx context.Context, holdID string, expiresAt time.Time) error {
	n, err := q.w.Exec(ctx, `UPDATE holds SET expires_at = `+q.d.Greatest+`(expires_at, $1) WHERE id = $2 AND expires_at > $3`,
		q.d.Time(expiresAt), holdID, q.d.Time(q.now()))
	return changed(n, err, "renew hold", holdID)
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
