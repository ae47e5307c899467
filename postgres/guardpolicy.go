package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

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
	tag, err := db.pool.Exec(ctx, `INSERT INTO guard_policies (subject, id, mode, scope, user_threshold, tool_threshold, assistant_threshold, updated_at)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8 WHERE EXISTS (SELECT 1 FROM `+table+` WHERE id = $2)
		ON CONFLICT (subject, id) DO UPDATE SET mode = excluded.mode, scope = excluded.scope, user_threshold = excluded.user_threshold,
			tool_threshold = excluded.tool_threshold, assistant_threshold = excluded.assistant_threshold, updated_at = excluded.updated_at`,
		subject, id, p.Mode, p.Scope, p.UserThreshold, p.ToolThreshold, p.AssistantThreshold, db.now())
	if err != nil {
		return fmt.Errorf("set guard policy: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("set guard policy: %s %q: %w", subject, id, gw.ErrNotFound)
	}
	return nil
}

// GuardPolicies returns the key's and the account's guard policies.
func (db *DB) GuardPolicies(ctx context.Context, keyID, accountID string) (key, account *gw.GuardPolicy, err error) {
	rows, err := db.pool.Query(ctx, `SELECT subject, mode, scope, user_threshold, tool_threshold, assistant_threshold
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

// SetIncidentText stores an incident's flagged text and its hash.
func (db *DB) SetIncidentText(ctx context.Context, t gw.IncidentText) error {
	if _, err := db.pool.Exec(ctx, `INSERT INTO incident_texts (incident_id, account_id, hash, text) VALUES ($1, $2, $3, $4)
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
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var accountID string
		if err := tx.QueryRow(ctx, `SELECT account_id FROM incidents WHERE id = $1`, r.IncidentID).Scan(&accountID); err != nil {
			return fmt.Errorf("review incident %q: %w", r.IncidentID, notFound(err))
		}
		if _, err := tx.Exec(ctx, `INSERT INTO incident_reviews (incident_id, verdict, note, reviewed_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (incident_id) DO UPDATE SET verdict = excluded.verdict, note = excluded.note, reviewed_at = excluded.reviewed_at`,
			r.IncidentID, r.Verdict, r.Note, r.ReviewedAt); err != nil {
			return fmt.Errorf("review incident: %w", err)
		}
		var hash []byte
		err := tx.QueryRow(ctx, `SELECT hash FROM incident_texts WHERE incident_id = $1`, r.IncidentID).Scan(&hash)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			// no text kept: nothing to allow
		case err != nil:
			return fmt.Errorf("review incident: %w", err)
		case r.Verdict == gw.ReviewFalsePositive:
			if _, err := tx.Exec(ctx, `INSERT INTO guard_allow (account_id, hash, incident_id, created_at) VALUES ($1, $2, $3, $4)
				ON CONFLICT (account_id, hash) DO NOTHING`, accountID, hash, r.IncidentID, r.ReviewedAt); err != nil {
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

// IncidentReviews returns the reviews of the given incidents.
func (db *DB) IncidentReviews(ctx context.Context, ids []string) (map[string]gw.IncidentReview, error) {
	out := map[string]gw.IncidentReview{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT incident_id, verdict, note, reviewed_at FROM incident_reviews WHERE incident_id = ANY($1)`, ids)
	if err != nil {
		return nil, fmt.Errorf("incident reviews: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r gw.IncidentReview
		if err := rows.Scan(&r.IncidentID, &r.Verdict, &r.Note, &r.ReviewedAt); err != nil {
			return nil, fmt.Errorf("incident reviews: %w", err)
		}
		out[r.IncidentID] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("incident reviews: %w", err)
	}
	return out, nil
}

// ReviewedIncidents returns every reviewed incident, oldest review first.
func (db *DB) ReviewedIncidents(ctx context.Context) ([]gw.ReviewedIncident, error) {
	rows, err := db.pool.Query(ctx, `SELECT i.id, i.request_id, i.account_id, i.key_id, i.kind, i.score, i.reason, i.excerpt, i.created_at,
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
		if err := rows.Scan(&ri.ID, &ri.RequestID, &ri.AccountID, &ri.KeyID, &ri.Kind, &ri.Score, &ri.Reason, &ri.Excerpt, &ri.CreatedAt,
			&ri.Review.Verdict, &ri.Review.Note, &ri.Review.ReviewedAt, &ri.Text); err != nil {
			return nil, fmt.Errorf("reviewed incidents: %w", err)
		}
		ri.Review.IncidentID = ri.ID
		out = append(out, ri)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reviewed incidents: %w", err)
	}
	return out, nil
}

// GuardAllowed reports whether the hash is on the account's allow list.
func (db *DB) GuardAllowed(ctx context.Context, accountID string, hash [32]byte) (bool, error) {
	var ok bool
	if err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM guard_allow WHERE account_id = $1 AND hash = $2)`, accountID, hash[:]).Scan(&ok); err != nil {
		return false, fmt.Errorf("guard allowed: %w", err)
	}
	return ok, nil
}
