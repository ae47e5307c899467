package dashboard

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"

	gw "github.com/gwlabs/gateway"
)

// maxNote bounds a review note.
const maxNote = 2000

// reviewIncident records the administrator's review of an incident
// (POST /dashboard/incidents/{id}/review, fields verdict and note; the
// form is cross-origin protected like sign-in and sign-out). A false
// positive puts the incident's text on its account's allow list, so the
// same text passes next time.
func (d *Dashboard) reviewIncident(w http.ResponseWriter, r *http.Request, v *viewer) {
	if !v.admin {
		p := &errorPage{basePage: base(v, "Forbidden", "incidents", ""), Heading: "Not allowed", Message: "Only the administrator reviews incidents."}
		d.render(w, r, http.StatusForbidden, "error", p)
		return
	}
	id := r.PathValue("id")
	verdict := r.PostFormValue("verdict")
	note := strings.TrimSpace(r.PostFormValue("note"))
	if verdict != gw.ReviewFalsePositive && verdict != gw.ReviewConfirmed || len(note) > maxNote {
		p := &errorPage{basePage: base(v, "Bad review", "incidents", ""), Heading: "Bad review", Message: "A review is false-positive or confirmed, with a note of at most 2,000 bytes."}
		d.render(w, r, http.StatusBadRequest, "error", p)
		return
	}
	if err := d.store.ReviewIncident(r.Context(), gw.IncidentReview{IncidentID: id, Verdict: verdict, Note: note}); err != nil {
		if errors.Is(err, gw.ErrNotFound) {
			d.notFound(w, r)
			return
		}
		d.fail(w, r, v, err)
		return
	}
	q := url.Values{}
	if a := r.PostFormValue("account"); a != "" {
		q.Set("account", a)
	}
	http.Redirect(w, r, withQuery("/dashboard/incidents", q)+"#"+url.PathEscape(id), http.StatusSeeOther)
}

// policyView is one key's effective guard policy.
type policyView struct {
	KeyID, KeyHint, AccountName string
	Mode, Scope                 string
	Thresholds                  string
}

// policies lists the effective guard policy of the live keys shown:
// the account's (or, for the administrator without a chosen account,
// every account's).
func (d *Dashboard) policies(r *http.Request, v *viewer, account string) ([]policyView, error) {
	var out []policyView
	for _, k := range v.keys {
		if k.RevokedAt != nil || account != "" && k.AccountID != account || !v.admin && k.AccountID != v.accountID {
			continue
		}
		kp, ap, err := d.store.GuardPolicies(r.Context(), k.ID, k.AccountID)
		if err != nil {
			return nil, err
		}
		p := gw.EffectiveGuardPolicy(kp, ap)
		var thr []string
		for _, t := range []struct {
			name string
			x    float64
		}{{"user", p.UserThreshold}, {"tool", p.ToolThreshold}, {"assistant", p.AssistantThreshold}} {
			if t.x > 0 {
				thr = append(thr, fmt.Sprintf("%s %.2f", t.name, t.x))
			}
		}
		th := "the guard's"
		if len(thr) > 0 {
			th = strings.Join(thr, ", ")
		}
		out = append(out, policyView{KeyID: k.ID, KeyHint: k.Hint, AccountName: k.AccountName, Mode: p.Mode, Scope: p.Scope, Thresholds: th})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].AccountName != out[j].AccountName {
			return out[i].AccountName < out[j].AccountName
		}
		return out[i].KeyID < out[j].KeyID
	})
	return out, nil
}
