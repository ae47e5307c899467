package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

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
