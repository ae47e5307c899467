package sqlstore

import (
	"fmt"
	"time"

	gw "github.com/gwlabs/gateway"
)

// LapsedHold is a hold ExpireHolds deleted: its request's process
// stopped renewing it (a crash, most likely).
type LapsedHold struct {
	ID, AccountID, KeyID string
	Vendor, Model        string
	// Restarted: released by its instance's next start
	// (ReleaseEarlierIncarnations), not by its lease's end.
	Restarted bool
	Amount    gw.Money
	CreatedAt time.Time
}

// NoteCutByCrash starts the note of the record of a request cut by a
// crash.
const NoteCutByCrash = "cut_by_crash"

// CutRecord is the operator's record of a request whose hold lapsed:
// the account, key, vendor, model, time and amount held; the vendor's
// cost of a partial answer is unknown. Its request id is the hold's
// with ":cut" appended, so that a late settle of the same request
// (a live process that could not renew) keeps its own record.
func CutRecord(h LapsedHold) *gw.Record {
	why := "lapsed (the process serving the request stopped renewing it)"
	if h.Restarted {
		why = "was released when its instance restarted (the process serving the request was gone)"
	}
	return &gw.Record{
		RequestID: h.ID + ":cut", AccountID: h.AccountID, KeyID: h.KeyID, Vendor: h.Vendor, Model: h.Model, Guard: "off", CreatedAt: h.CreatedAt,
		Note: fmt.Sprintf("%s: the hold of $%s %s; the vendor's cost of any partial answer is unknown", NoteCutByCrash, h.Amount.USDString(), why),
	}
}
