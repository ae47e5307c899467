package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/sqlstore"
)

var _ gw.GuardStore = (*DB)(nil)

// ReviewIncident records a review and keeps the account's allow list in
// step with it, in one transaction.
func (db *DB) ReviewIncident(ctx context.Context, r gw.IncidentReview) error {
	if err := sqlstore.CheckReview(&r, db.now); err != nil {
		return err
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
