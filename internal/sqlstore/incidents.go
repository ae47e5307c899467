package sqlstore

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
)

// NewID returns prefix followed by 26 random base32 characters.
func NewID(prefix string) string {
	var b [16]byte
	rand.Read(b[:])
	return prefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

// CreateIncident stores in. It fills in in.ID ("inc_" + random) and
// in.CreatedAt when they are empty.
func (q Queries) CreateIncident(ctx context.Context, in *gw.Incident) error {
	if in.ID == "" {
		in.ID = NewID("inc_")
	}
	if in.CreatedAt.IsZero() {
		in.CreatedAt = q.now()
	}
	in.CreatedAt = in.CreatedAt.Truncate(time.Microsecond)
	if _, err := q.w.Exec(ctx, `INSERT INTO incidents (id, request_id, account_id, key_id, kind, score, reason, excerpt, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		in.ID, in.RequestID, in.AccountID, in.KeyID, in.Kind, in.Score, in.Reason, in.Excerpt, q.d.Time(in.CreatedAt)); err != nil {
		return fmt.Errorf("create incident: %w", err)
	}
	return nil
}

const incidentColumns = `id, request_id, account_id, key_id, kind, score, reason, excerpt, created_at`

func scanIncident(row Row) (gw.Incident, error) {
	var in gw.Incident
	err := row.Scan(&in.ID, &in.RequestID, &in.AccountID, &in.KeyID, &in.Kind, &in.Score, &in.Reason, &in.Excerpt, When(&in.CreatedAt))
	return in, err
}

// Incidents returns up to limit incidents (default 100), newest first.
func (q Queries) Incidents(ctx context.Context, n int) ([]gw.Incident, error) {
	rows, err := q.r.Query(ctx, `SELECT `+incidentColumns+` FROM incidents ORDER BY created_at DESC, id DESC LIMIT $1`, Limit(n))
	out, err := collect(rows, err, scanIncident)
	if err != nil {
		return nil, fmt.Errorf("incidents: %w", err)
	}
	return out, nil
}

// IncidentsOf returns the account's latest incidents, newest first (an
// index range: never the other accounts').
func (q Queries) IncidentsOf(ctx context.Context, accountID string, n int) ([]gw.Incident, error) {
	rows, err := q.r.Query(ctx, `SELECT `+incidentColumns+` FROM incidents WHERE account_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`, accountID, Limit(n))
	out, err := collect(rows, err, scanIncident)
	if err != nil {
		return nil, fmt.Errorf("incidents of %q: %w", accountID, err)
	}
	return out, nil
}

// Incident returns one incident.
func (q Queries) Incident(ctx context.Context, id string) (*gw.Incident, error) {
	in, err := scanIncident(q.r.QueryRow(ctx, `SELECT `+incidentColumns+` FROM incidents WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("incident %q: %w", id, q.d.NotFound(err))
	}
	return &in, nil
}

// SetIncidentText stores an incident's flagged text and its hash.
func (q Queries) SetIncidentText(ctx context.Context, t gw.IncidentText) error {
	if _, err := q.w.Exec(ctx, `INSERT INTO incident_texts (incident_id, account_id, hash, text) VALUES ($1, $2, $3, $4)
		ON CONFLICT (incident_id) DO UPDATE SET account_id = excluded.account_id, hash = excluded.hash, text = excluded.text`,
		t.IncidentID, t.AccountID, t.Hash[:], t.Text); err != nil {
		return fmt.Errorf("set incident text: %w", err)
	}
	return nil
}

// IncidentReviews returns the reviews of the given incidents.
func (q Queries) IncidentReviews(ctx context.Context, ids []string) (map[string]gw.IncidentReview, error) {
	out := map[string]gw.IncidentReview{}
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	marks := make([]string, len(ids))
	for i, id := range ids {
		args[i], marks[i] = id, "$"+strconv.Itoa(i+1)
	}
	rows, err := q.r.Query(ctx, `SELECT incident_id, verdict, note, reviewed_at FROM incident_reviews
		WHERE incident_id IN (`+strings.Join(marks, ", ")+`)`, args...)
	reviews, err := collect(rows, err, func(row Row) (gw.IncidentReview, error) {
		var r gw.IncidentReview
		err := row.Scan(&r.IncidentID, &r.Verdict, &r.Note, When(&r.ReviewedAt))
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("incident reviews: %w", err)
	}
	for _, r := range reviews {
		out[r.IncidentID] = r
	}
	return out, nil
}

// ReviewedIncidents returns every reviewed incident, oldest review first.
func (q Queries) ReviewedIncidents(ctx context.Context) ([]gw.ReviewedIncident, error) {
	rows, err := q.r.Query(ctx, `SELECT i.id, i.request_id, i.account_id, i.key_id, i.kind, i.score, i.reason, i.excerpt, i.created_at,
			r.verdict, r.note, r.reviewed_at, coalesce(t.text, i.excerpt)
		FROM incident_reviews r JOIN incidents i ON i.id = r.incident_id
		LEFT JOIN incident_texts t ON t.incident_id = r.incident_id
		ORDER BY r.reviewed_at, r.incident_id`)
	out, err := collect(rows, err, func(row Row) (gw.ReviewedIncident, error) {
		var ri gw.ReviewedIncident
		err := row.Scan(&ri.ID, &ri.RequestID, &ri.AccountID, &ri.KeyID, &ri.Kind, &ri.Score, &ri.Reason, &ri.Excerpt, When(&ri.CreatedAt),
			&ri.Review.Verdict, &ri.Review.Note, When(&ri.Review.ReviewedAt), &ri.Text)
		ri.Review.IncidentID = ri.ID
		return ri, err
	})
	if err != nil {
		return nil, fmt.Errorf("reviewed incidents: %w", err)
	}
	return out, nil
}

// GuardPolicies returns the key's and the account's guard policies.
func (q Queries) GuardPolicies(ctx context.Context, keyID, accountID string) (key, account *gw.GuardPolicy, err error) {
	rows, err := q.r.Query(ctx, `SELECT subject, mode, scope, user_threshold, tool_threshold, assistant_threshold
		FROM guard_policies WHERE subject = 'key' AND id = $1 OR subject = 'account' AND id = $2`, keyID, accountID)
	if err != nil {
		return nil, nil, fmt.Errorf("guard policies: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var subject string
		var p gw.GuardPolicy
		if err := rows.Scan(&subject, &p.Mode, &p.Scope, &p.UserThreshold, &p.ToolThreshold, &p.AssistantThreshold); err != nil {
			return nil, nil, fmt.Errorf("guard policies: %w", err)
		}
		if subject == "key" {
			key = &p
		} else {
			account = &p
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("guard policies: %w", err)
	}
	return key, account, nil
}

// GuardAllowed reports whether the hash is on the account's allow list.
func (q Queries) GuardAllowed(ctx context.Context, accountID string, hash [32]byte) (bool, error) {
	var n int64
	if err := q.r.QueryRow(ctx, `SELECT count(*) FROM guard_allow WHERE account_id = $1 AND hash = $2`, accountID, hash[:]).Scan(&n); err != nil {
		return false, fmt.Errorf("guard allowed: %w", err)
	}
	return n > 0, nil
}

// SetGuardPolicy stores the guard policy of a key or an account; an
// unknown key or account is ErrNotFound.
func (q Queries) SetGuardPolicy(ctx context.Context, subject, id string, p gw.GuardPolicy) error {
	var table string
	switch subject {
	case "key":
		table = "api_keys"
	case "account":
		table = "accounts"
	default:
		return fmt.Errorf("set guard policy: subject %q: want key or account", subject)
	}
	n, err := q.w.Exec(ctx, `INSERT INTO guard_policies (subject, id, mode, scope, user_threshold, tool_threshold, assistant_threshold, updated_at)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8 WHERE EXISTS (SELECT 1 FROM `+table+` WHERE id = $2)
		ON CONFLICT (subject, id) DO UPDATE SET mode = excluded.mode, scope = excluded.scope, user_threshold = excluded.user_threshold,
			tool_threshold = excluded.tool_threshold, assistant_threshold = excluded.assistant_threshold, updated_at = excluded.updated_at`,
		subject, id, p.Mode, p.Scope, p.UserThreshold, p.ToolThreshold, p.AssistantThreshold, q.d.Time(q.now()))
	if err != nil {
		return fmt.Errorf("set guard policy: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("set guard policy: %s %q: %w", subject, id, gw.ErrNotFound)
	}
	return nil
}

// ReviewIncident records a review and keeps the account's allow list in
// step with it, in one transaction: a false positive allows the
// incident's text on its account, a confirmation takes it off again.
func (q Queries) ReviewIncident(ctx context.Context, r gw.IncidentReview) error {
	if err := CheckReview(&r, q.now); err != nil {
		return err
	}
	return q.w.Tx(ctx, func(tx Conn) error {
		var accountID string
		if err := tx.QueryRow(ctx, `SELECT account_id FROM incidents WHERE id = $1`, r.IncidentID).Scan(&accountID); err != nil {
			return fmt.Errorf("review incident %q: %w", r.IncidentID, q.d.NotFound(err))
		}
		if _, err := tx.Exec(ctx, `INSERT INTO incident_reviews (incident_id, verdict, note, reviewed_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (incident_id) DO UPDATE SET verdict = excluded.verdict, note = excluded.note, reviewed_at = excluded.reviewed_at`,
			r.IncidentID, r.Verdict, r.Note, q.d.Time(r.ReviewedAt)); err != nil {
			return fmt.Errorf("review incident: %w", err)
		}
		var hash []byte
		err := tx.QueryRow(ctx, `SELECT hash FROM incident_texts WHERE incident_id = $1`, r.IncidentID).Scan(&hash)
		switch {
		case err != nil && errors.Is(q.d.NotFound(err), gw.ErrNotFound):
			// no text kept (an incident from before texts were kept): nothing to allow
		case err != nil:
			return fmt.Errorf("review incident: %w", err)
		case r.Verdict == gw.ReviewFalsePositive:
			if _, err := tx.Exec(ctx, `INSERT INTO guard_allow (account_id, hash, incident_id, created_at) VALUES ($1, $2, $3, $4)
				ON CONFLICT (account_id, hash) DO NOTHING`, accountID, hash, r.IncidentID, q.d.Time(r.ReviewedAt)); err != nil {
				return fmt.Errorf("review incident: allow: %w", err)
			}
		default:
			if _, err := tx.Exec(ctx, `DELETE FROM guard_allow WHERE account_id = $1 AND hash = $2`, accountID, hash); err != nil {
				return fmt.Errorf("review incident: disallow: %w", err)
			}
		}
		return nil
	})
}
