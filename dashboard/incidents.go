package dashboard

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	gw "github.com/gwlabs/gateway"
)

// incidentsScan bounds the incidents one page reads from the store.
const incidentsScan = 1000

// incidentsPage lists the requests the guard blocked, newest first: every
// account's for the administrator (or the chosen account's), the
// account's own for a key's session. ?request=ID shows the incident of
// one request (the logs page links blocked rows there).
type incidentsPage struct {
	basePage
	Accounts []accountOption
	Account  string // the chosen account (admin)
	Request  string
	Rows     []incidentView
	// Policies is the effective guard policy of each live key shown.
	Policies []policyView
}

type incidentView struct {
	ID, RequestID, RequestURL string
	TimeFull, Clock, Date     string
	AccountID, AccountName    string
	KeyID, KeyHint            string
	Kind, Score, Reason       string
	Excerpt                   string
	// Review is the review's verdict ("" when not reviewed), with its
	// note and time.
	Review, ReviewNote, ReviewTime string
}

func (d *Dashboard) incidents(w http.ResponseWriter, r *http.Request, v *viewer) {
	q := r.URL.Query()
	account := v.scope(q)
	request := strings.TrimSpace(q.Get("request"))
	var all []gw.Incident
	var err error
	if account != "" {
		// One account's page reads its own incidents from their index:
		// another account's flood cannot push them out of the scan.
		all, err = d.store.IncidentsOf(r.Context(), account, incidentsScan)
	} else {
		all, err = d.store.Incidents(r.Context(), incidentsScan)
	}
	if err != nil {
		d.fail(w, r, v, err)
		return
	}
	p := &incidentsPage{basePage: base(v, "Incidents", "incidents", account), Accounts: v.options(account), Account: account, Request: request}
	var ids []string
	for i := range all {
		in := &all[i]
		if account != "" && in.AccountID != account || request != "" && in.RequestID != request {
			continue
		}
		p.Rows = append(p.Rows, d.incidentView(v, in, account))
		ids = append(ids, in.ID)
	}
	revs, err := d.store.IncidentReviews(r.Context(), ids)
	if err != nil {
		d.fail(w, r, v, err)
		return
	}
	for i := range p.Rows {
		if rv, ok := revs[p.Rows[i].ID]; ok {
			p.Rows[i].Review = rv.Verdict
			if v.admin {
				// The note is support's, not the customer's.
				p.Rows[i].ReviewNote = rv.Note
			}
			p.Rows[i].ReviewTime = rv.ReviewedAt.UTC().Format(timeLayoutMs)
		}
	}
	if p.Policies, err = d.policies(r, v, account); err != nil {
		d.fail(w, r, v, err)
		return
	}
	d.render(w, r, http.StatusOK, "incidents", p)
}

func (d *Dashboard) incidentView(v *viewer, in *gw.Incident, account string) incidentView {
	q := url.Values{}
	if v.admin && account != "" {
		q.Set("account", account)
	}
	iv := incidentView{
		ID: in.ID, RequestID: in.RequestID,
		RequestURL: withQuery("/dashboard/logs/"+url.PathEscape(in.RequestID), q),
		TimeFull:   in.CreatedAt.UTC().Format(timeLayoutMs),
		Clock:      in.CreatedAt.UTC().Format("15:04:05"),
		Date:       in.CreatedAt.UTC().Format("2006-01-02"),
		AccountID:  in.AccountID, AccountName: v.nameOf(in.AccountID),
		KeyID: in.KeyID,
		Kind:  in.Kind, Score: strconv.FormatFloat(in.Score, 'f', 3, 64), Reason: in.Reason,
		Excerpt: in.Excerpt,
	}
	if k, ok := v.keys[in.KeyID]; ok {
		iv.KeyHint = k.Hint
	}
	return iv
}
