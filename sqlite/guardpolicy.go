package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	gw "github.com/gwlabs/gateway"
)

var _ gw.GuardStore = (*DB)(nil)

// SetGuardPolicy stores the guard policy of a key or an account.
func (db *DB) SetGuardPolicy(ctx context.Context, subject, id string, p gw.GuardPolicy) error {
	var table string
	switch subject {
	case "key":
		table = "api_keys"
	case "account":
		table = "accounts"
	default:
		return fmt.Errorf("set guard policy: subject %q: want key or account", subject)
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("set guard policy: %w", err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM `+table+` WHERE id = ?`, id).Scan(&n); err != nil {
		return fmt.Errorf("set guard policy: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("set guard policy: %s %q: %w", subject, id, gw.ErrNotFound)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO guard_policies (subject, id, mode, scope, user_threshold, tool_threshold, assistant_threshold, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (subject, id) DO UPDATE SET mode = excluded.mode, scope = excluded.scope, user_threshold = excluded.user_threshold,
			tool_threshold = excluded.tool_threshold, assistant_threshold = excluded.assistant_threshold, updated_at = excluded.updated_at`,
		subject, id, p.Mode, p.Scope, p.UserThreshold, p.ToolThreshold, p.AssistantThreshold, micros(db.now())); err != nil {
		return fmt.Errorf("set guard policy: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("set guard policy: %w", err)
	}
	return nil
}

// GuardPolicies returns the key's and the account's guard policies.
func (db *DB) GuardPolicies(ctx context.Context, keyID, accountID string) (key, account *gw.GuardPolicy, err error) {
	rows, err := db.r.QueryContext(ctx, `SELECT subject, mode, scope, user_threshold, tool_threshold, assistant_threshold
		FROM guard_policies WHERE subject = 'key' AND id = ? OR subject = 'account' AND id = ?`, keyID, accountID)
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

// SetIncidentText stores an incident's flagged text and its hash.
func (db *DB) SetIncidentText(ctx context.Context, t gw.IncidentText) error {
	if _, err := db.w.ExecContext(ctx, `INSERT INTO incident_texts (incident_id, account_id, hash, text) VALUES (?, ?, ?, ?)
		ON CONFLICT (incident_id) DO UPDATE SET account_id = excluded.account_id, hash = excluded.hash, text = excluded.text`,
		t.IncidentID, t.AccountID, t.Hash[:], t.Text); err != nil {
		return fmt.Errorf("set incident text: %w", err)
	}
	return nil
}

// ReviewIncident records a review and keeps the account's allow list in
// step with it, in one transaction.
func (db *DB) ReviewIncident(ctx context.Context, r gw.IncidentReview) error {
	if r.Verdict != gw.ReviewFalsePositive && r.Verdict != gw.ReviewConfirmed {
		return fmt.Errorf("review incident: verdict %q: want %s or %s", r.Verdict, gw.ReviewFalsePositive, gw.ReviewConfirmed)
	}
	if r.ReviewedAt.IsZero() {
		r.ReviewedAt = db.now()
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("review incident: %w", err)
	}
	defer tx.Rollback()
	var accountID string
	if err := tx.QueryRowContext(ctx, `SELECT account_id FROM incidents WHERE id = ?`, r.IncidentID).Scan(&accountID); err != nil {
		return fmt.Errorf("review incident %q: %w", r.IncidentID, notFound(err))
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO incident_reviews (incident_id, verdict, note, reviewed_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (incident_id) DO UPDATE SET verdict = excluded.verdict, note = excluded.note, reviewed_at = excluded.reviewed_at`,
		r.IncidentID, r.Verdict, r.Note, micros(r.ReviewedAt)); err != nil {
		return fmt.Errorf("review incident: %w", err)
	}
	var hash []byte
	err = tx.QueryRowContext(ctx, `SELECT hash FROM incident_texts WHERE incident_id = ?`, r.IncidentID).Scan(&hash)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		// no text kept (an incident from before texts were kept): nothing to allow
	case err != nil:
		return fmt.Errorf("review incident: %w", err)
	case r.Verdict == gw.ReviewFalsePositive:
		if _, err := tx.ExecContext(ctx, `INSERT INTO guard_allow (account_id, hash, incident_id, created_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (account_id, hash) DO NOTHING`, accountID, hash, r.IncidentID, micros(r.ReviewedAt)); err != nil {
			return fmt.Errorf("review incident: allow: %w", err)
		}
	default:
		if _, err := tx.ExecContext(ctx, `DELETE FROM guard_allow WHERE account_id = ? AND hash = ?`, accountID, hash); err != nil {
			return fmt.Errorf("review incident: disallow: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("review incident: %w", err)
	}
	return nil
}

// IncidentReviews returns the reviews of the given incidents.
func (db *DB) IncidentReviews(ctx context.Context, ids []string) (map[string]gw.IncidentReview, error) {
	out := map[string]gw.IncidentReview{}
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := db.r.QueryContext(ctx, `SELECT incident_id, verdict, note, reviewed_at FROM incident_reviews
		WHERE incident_id IN (?`+strings.Repeat(", ?", len(ids)-1)+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("incident reviews: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r gw.IncidentReview
		var at int64
		if err := rows.Scan(&r.IncidentID, &r.Verdict, &r.Note, &at); err != nil {
			return nil, fmt.Errorf("incident reviews: %w", err)
		}
		r.ReviewedAt = fromMicros(at)
		out[r.IncidentID] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("incident reviews: %w", err)
	}
	return out, nil
}

// ReviewedIncidents returns every reviewed incident, oldest review first.
func (db *DB) ReviewedIncidents(ctx context.Context) ([]gw.ReviewedIncident, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT i.id, i.request_id, i.account_id, i.key_id, i.kind, i.score, i.reason, i.excerpt, i.created_at,
			r.verdict, r.note, r.reviewed_at, coalesce(t.text, i.excerpt)
		FROM incident_reviews r JOIN incidents i ON i.id = r.incident_id
		LEFT JOIN incident_texts t ON t.incident_id = r.incident_id
		ORDER BY r.reviewed_at, r.incident_id`)
	if err != nil {
		return nil, fmt.Errorf("reviewed incidents: %w", err)
	}
	defer rows.Close()
	var out []gw.ReviewedIncident
	for rows.Next() {
		var ri gw.ReviewedIncident
		var created, reviewed int64
		if err := rows.Scan(&ri.ID, &ri.RequestID, &ri.AccountID, &ri.KeyID, &ri.Kind, &ri.Score, &ri.Reason, &ri.Excerpt, &created,
			&ri.Review.Verdict, &ri.Review.Note, &reviewed, &ri.Text); err != nil {
			return nil, fmt.Errorf("reviewed incidents: %w", err)
		}
		ri.CreatedAt, ri.Review.ReviewedAt, ri.Review.IncidentID = fromMicros(created), fromMicros(reviewed), ri.ID
		out = append(out, ri)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reviewed incidents: %w", err)
	}
	return out, nil
}

// GuardAllowed reports whether the hash is on the account's allow list.
func (db *DB) GuardAllowed(ctx context.Context, accountID string, hash [32]byte) (bool, error) {
	var n int
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM guard_allow WHERE account_id = ? AND hash = ?`, accountID, hash[:]).Scan(&n); err != nil {
		return false, fmt.Errorf("guard allowed: %w", err)
	}
	return n > 0, nil
}
