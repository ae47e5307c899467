package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	gw "github.com/gwlabs/gateway"
)

// maxRunDepth bounds a run's chain of ancestors (a run's parent is fixed
// when the run is first seen, so a chain has no cycle; the bound keeps a
// caller from making every step walk a long one).
const maxRunDepth = 8

const runColumns = `account_id, id, parent_id, key_id, budget, max_requests, idle_seconds, spend, held, requests, inflight, errors, incidents, first_seen, last_seen`

func scanRun(row Row) (gw.Run, error) {
	var r gw.Run
	var budget, spend, held, idle int64
	err := row.Scan(&r.AccountID, &r.ID, &r.ParentID, &r.KeyID, &budget, &r.MaxRequests, &idle, &spend, &held,
		&r.Requests, &r.InFlight, &r.Errors, &r.Incidents, When(&r.FirstSeen), When(&r.LastSeen))
	r.Budget, r.Spend, r.Held, r.Idle = gw.Money(budget), gw.Money(spend), gw.Money(held), time.Duration(idle)*time.Second
	return r, err
}

// lockRun takes the run's row lock for the rest of tx (a write that
// changes nothing: PostgreSQL locks the row, SQLite's writer is one) and
// reads it; false when there is none.
func (q Queries) lockRun(ctx context.Context, tx Conn, accountID, id string) (*gw.Run, bool, error) {
	n, err := tx.Exec(ctx, `UPDATE runs SET last_seen = last_seen WHERE account_id = $1 AND id = $2`, accountID, id)
	if err != nil || n == 0 {
		return nil, false, err
	}
	r, err := scanRun(tx.QueryRow(ctx, `SELECT `+runColumns+` FROM runs WHERE account_id = $1 AND id = $2`, accountID, id))
	if err != nil {
		return nil, false, err
	}
	return &r, true, nil
}

// createRun inserts the run unless another transaction did first.
func (q Queries) createRun(ctx context.Context, tx Conn, accountID, keyID, id, parent string, c gw.RunCaps, now time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO runs (account_id, id, parent_id, key_id, budget, max_requests, idle_seconds, first_seen, last_seen)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) ON CONFLICT (account_id, id) DO NOTHING`,
		accountID, id, parent, keyID, int64(c.Budget), c.MaxRequests, int64(c.Idle/time.Second), q.d.Time(now))
	return err
}

// chain locks and reads the run and its ancestors, leaf first (always in
// that order, so two transactions never wait on each other in a cycle).
func (q Queries) chain(ctx context.Context, tx Conn, accountID, id string) ([]*gw.Run, error) {
	var out []*gw.Run
	for id != "" && len(out) < maxRunDepth {
		r, ok, err := q.lockRun(ctx, tx, accountID, id)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		out = append(out, r)
		id = r.ParentID
	}
	return out, nil
}

// HoldRun admits a step of a run (see gw.RunStore).
func (q Queries) HoldRun(ctx context.Context, h gw.RunHold) (*gw.Run, error) {
	var leaf *gw.Run
	err := q.w.Tx(ctx, func(tx Conn) error {
		if err := q.sweepRunHolds(ctx, tx, h.AccountID, h.RunID, h.Now); err != nil {
			return err
		}
		_, ok, err := q.lockRun(ctx, tx, h.AccountID, h.RunID)
		if err != nil {
			return err
		}
		if !ok {
			caps := h.Caps
			if caps == (gw.RunCaps{}) && h.KeyID != "" {
				if caps, err = runDefaults(ctx, tx, h.KeyID); err != nil {
					return err
				}
			}
			if h.ParentID != "" && h.ParentID != h.RunID {
				if _, pok, err := q.lockRun(ctx, tx, h.AccountID, h.ParentID); err != nil {
					return err
				} else if !pok {
					if err := q.createRun(ctx, tx, h.AccountID, h.KeyID, h.ParentID, "", gw.RunCaps{}, h.Now); err != nil {
						return err
					}
				}
			} else {
				h.ParentID = ""
			}
			if err := q.createRun(ctx, tx, h.AccountID, h.KeyID, h.RunID, h.ParentID, caps, h.Now); err != nil {
				return err
			}
		} else if h.Caps != (gw.RunCaps{}) {
			// A cap the run does not have yet is filled; one it has
			// stays (a later header cannot lift it).
			if _, err := tx.Exec(ctx, `UPDATE runs SET
				budget = CASE WHEN budget = 0 THEN $3 ELSE budget END,
				max_requests = CASE WHEN max_requests = 0 THEN $4 ELSE max_requests END,
				idle_seconds = CASE WHEN idle_seconds = 0 THEN $5 ELSE idle_seconds END
				WHERE account_id = $1 AND id = $2`, h.AccountID, h.RunID, int64(h.Caps.Budget), h.Caps.MaxRequests, int64(h.Caps.Idle/time.Second)); err != nil {
				return err
			}
		}
		runs, err := q.chain(ctx, tx, h.AccountID, h.RunID)
		if err != nil {
			return err
		}
		if len(runs) == 0 {
			return fmt.Errorf("run %q: %w", h.RunID, errNotFound)
		}
		for _, r := range runs {
			switch {
			case r.ExpiredAt(h.Now):
				return gw.RunRefusal(gw.ErrorCodeRunExpired, r, h.Amount)
			case r.MaxRequests > 0 && r.Requests+r.InFlight+1 > r.MaxRequests:
				return gw.RunRefusal(gw.ErrorCodeRunSteps, r, h.Amount)
			case r.Budget > 0 && (r.Spend+r.Held+h.Amount > r.Budget || h.Amount == 0 && r.Spend+r.Held >= r.Budget):
				return gw.RunRefusal(gw.ErrorCodeRunBudget, r, h.Amount)
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO run_holds (request_id, account_id, run_id, amount, expires_at) VALUES ($1, $2, $3, $4, $5)`,
			h.RequestID, h.AccountID, h.RunID, int64(h.Amount), q.d.Time(h.ExpiresAt)); err != nil {
			return err
		}
		for _, r := range runs {
			if _, err := tx.Exec(ctx, `UPDATE runs SET held = held + $3, inflight = inflight + 1, last_seen = $4 WHERE account_id = $1 AND id = $2`,
				h.AccountID, r.ID, int64(h.Amount), q.d.Time(h.Now)); err != nil {
				return err
			}
			r.Held += h.Amount
			r.InFlight++
			r.LastSeen = h.Now
		}
		leaf = runs[0]
		return nil
	})
	if err != nil {
		var ge *gw.Error
		if errors.As(err, &ge) {
			return nil, ge
		}
		return nil, fmt.Errorf("hold run: %w", q.d.NotFound(err))
	}
	return leaf, nil
}

// sweepRunHolds releases the holds of the run's steps past their expiry
// (their process died before the settle), on the run and its ancestors.
func (q Queries) sweepRunHolds(ctx context.Context, tx Conn, accountID, runID string, now time.Time) error {
	type hold struct {
		id     string
		amount int64
	}
	holds, err := queryAll(ctx, tx, func(r Row) (hold, error) {
		var h hold
		return h, r.Scan(&h.id, &h.amount)
	}, `SELECT request_id, amount FROM run_holds WHERE account_id = $1 AND run_id = $2 AND expires_at < $3`, accountID, runID, q.d.Time(now))
	if err != nil {
		return err
	}
	for _, h := range holds {
		if err := q.releaseRunHold(ctx, tx, accountID, runID, h.id, h.amount); err != nil {
			return err
		}
	}
	return nil
}

func (q Queries) releaseRunHold(ctx context.Context, tx Conn, accountID, runID, requestID string, amount int64) error {
	if _, err := tx.Exec(ctx, `DELETE FROM run_holds WHERE request_id = $1`, requestID); err != nil {
		return err
	}
	runs, err := q.chain(ctx, tx, accountID, runID)
	if err != nil {
		return err
	}
	for _, r := range runs {
		if _, err := tx.Exec(ctx, `UPDATE runs SET held = `+q.d.Greatest+`(held - $3, 0), inflight = `+q.d.Greatest+`(inflight - 1, 0) WHERE account_id = $1 AND id = $2`,
			accountID, r.ID, amount); err != nil {
			return err
		}
	}
	return nil
}

// ReleaseRun drops a step's hold without counting it.
func (q Queries) ReleaseRun(ctx context.Context, accountID, runID, requestID string) error {
	err := q.w.Tx(ctx, func(tx Conn) error {
		var amount int64
		if err := tx.QueryRow(ctx, `SELECT amount FROM run_holds WHERE request_id = $1 AND account_id = $2 AND run_id = $3`, requestID, accountID, runID).Scan(&amount); err != nil {
			return err
		}
		return q.releaseRunHold(ctx, tx, accountID, runID, requestID, amount)
	})
	if err != nil {
		return fmt.Errorf("release run: %w", q.d.NotFound(err))
	}
	return nil
}

// SettleRun ends a step of a run (see gw.RunStore).
func (q Queries) SettleRun(ctx context.Context, accountID, runID string, s gw.RunStep, now time.Time) (*gw.Run, error) {
	var leaf *gw.Run
	err := q.w.Tx(ctx, func(tx Conn) error {
		var amount int64
		err := tx.QueryRow(ctx, `SELECT amount FROM run_holds WHERE request_id = $1 AND account_id = $2 AND run_id = $3`, s.RequestID, accountID, runID).Scan(&amount)
		held, holdID := err == nil, s.RequestID
		if err != nil && !errors.Is(q.d.NotFound(err), gw.ErrNotFound) {
			return err
		}
		if !held && s.Tool {
			// A tool step admitted before its request id was known:
			// any of the run's (they hold nothing).
			rows, err := tx.Query(ctx, `SELECT request_id, amount FROM run_holds WHERE account_id = $1 AND run_id = $2 AND request_id LIKE $3 LIMIT 1`,
				accountID, runID, gw.ToolStepPrefix+"%")
			if err != nil {
				return err
			}
			if rows.Next() {
				held = true
				err = rows.Scan(&holdID, &amount)
			}
			rows.Close()
			if err != nil {
				return err
			}
		}
		if held {
			if _, err := tx.Exec(ctx, `DELETE FROM run_holds WHERE request_id = $1`, holdID); err != nil {
				return err
			}
		}
		runs, err := q.chain(ctx, tx, accountID, runID)
		if err != nil {
			return err
		}
		if len(runs) == 0 {
			return fmt.Errorf("run %q: %w", runID, errNotFound)
		}
		var failed, blocked, inflight int64
		if s.Status >= 400 {
			failed = 1
		}
		if s.ErrorCode == gw.CodeRequestBlocked {
			blocked = 1
		}
		if held {
			inflight = 1
		}
		for _, r := range runs {
			if _, err := tx.Exec(ctx, `UPDATE runs SET held = `+q.d.Greatest+`(held - $3, 0), inflight = `+q.d.Greatest+`(inflight - $4, 0),
				spend = spend + $5, requests = requests + 1, errors = errors + $6, incidents = incidents + $7, last_seen = `+q.d.Greatest+`(last_seen, $8)
				WHERE account_id = $1 AND id = $2`, accountID, r.ID, amount, inflight, int64(s.Charge), failed, blocked, q.d.Time(now)); err != nil {
				return err
			}
		}
		u := s.Usage
		if _, err := tx.Exec(ctx, `INSERT INTO run_steps (account_id, run_id, request_id, endpoint, vendor, model, status, error_code,
			input_tokens, cache_read, cache_write, output, reasoning, charge, latency_us, guard, attempts, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) ON CONFLICT DO NOTHING`,
			accountID, runID, s.RequestID, string(s.Endpoint), s.Vendor, s.Model, int64(s.Status), string(s.ErrorCode),
			u.InputTokens, u.CacheReadTokens, u.CacheWriteTokens(), u.OutputTokens, u.ReasoningTokens, int64(s.Charge),
			s.Latency.Microseconds(), s.Guard, int64(s.Attempts), q.d.Time(s.CreatedAt)); err != nil {
			return err
		}
		r, err := scanRun(tx.QueryRow(ctx, `SELECT `+runColumns+` FROM runs WHERE account_id = $1 AND id = $2`, accountID, runID))
		if err != nil {
			return err
		}
		leaf = &r
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("settle run: %w", q.d.NotFound(err))
	}
	return leaf, nil
}

// Run reads one of the account's runs.
func (q Queries) Run(ctx context.Context, accountID, id string) (*gw.Run, error) {
	r, err := scanRun(q.r.QueryRow(ctx, `SELECT `+runColumns+` FROM runs WHERE account_id = $1 AND id = $2`, accountID, id))
	if err != nil {
		return nil, fmt.Errorf("run %q: %w", id, q.d.NotFound(err))
	}
	return &r, nil
}

// Runs lists the account's runs, the dearest first.
func (q Queries) Runs(ctx context.Context, accountID string, limit int) ([]gw.Run, error) {
	out, err := queryAll(ctx, q.r, scanRun, `SELECT `+runColumns+` FROM runs WHERE account_id = $1 ORDER BY spend DESC, last_seen DESC LIMIT $2`,
		accountID, Limit(limit))
	if err != nil {
		return nil, fmt.Errorf("runs: %w", err)
	}
	return out, nil
}

// RunChildren lists the run's children, the dearest first.
func (q Queries) RunChildren(ctx context.Context, accountID, id string) ([]gw.Run, error) {
	out, err := queryAll(ctx, q.r, scanRun, `SELECT `+runColumns+` FROM runs WHERE account_id = $1 AND parent_id = $2 ORDER BY spend DESC, id LIMIT 1000`,
		accountID, id)
	if err != nil {
		return nil, fmt.Errorf("run children: %w", err)
	}
	return out, nil
}

// RunSteps lists the run's finished steps, oldest first.
func (q Queries) RunSteps(ctx context.Context, accountID, id string, limit int) ([]gw.RunStep, error) {
	out, err := queryAll(ctx, q.r, scanStep, `SELECT request_id, run_id, endpoint, vendor, model, status, error_code, input_tokens, cache_read, cache_write,
		output, reasoning, charge, latency_us, guard, attempts, created_at FROM run_steps WHERE account_id = $1 AND run_id = $2
		ORDER BY created_at, request_id LIMIT $3`, accountID, id, Limit(limit))
	if err != nil {
		return nil, fmt.Errorf("run steps: %w", err)
	}
	return out, nil
}

func scanStep(r Row) (gw.RunStep, error) {
	var s gw.RunStep
	var endpoint, code string
	var status, charge, latency, attempts int64
	err := r.Scan(&s.RequestID, &s.RunID, &endpoint, &s.Vendor, &s.Model, &status, &code, &s.Usage.InputTokens, &s.Usage.CacheReadTokens,
		&s.Usage.CacheWrite5mTokens, &s.Usage.OutputTokens, &s.Usage.ReasoningTokens, &charge, &latency, &s.Guard, &attempts, When(&s.CreatedAt))
	s.Endpoint, s.ErrorCode, s.Status, s.Charge = gw.Shape(endpoint), gw.Code(code), int(status), gw.Money(charge)
	s.Latency, s.Attempts = time.Duration(latency)*time.Microsecond, int(attempts)
	return s, err
}

// queryAll runs q on c and scans every row with scan.
func queryAll[T any](ctx context.Context, c Conn, scan func(Row) (T, error), q string, args ...any) ([]T, error) {
	rows, err := c.Query(ctx, q, args...)
	return collect(rows, err, scan)
}

// SetRunDefaults stores a key's run caps; zero caps remove them.
func (q Queries) SetRunDefaults(ctx context.Context, keyID string, c gw.RunCaps) error {
	var exists int64
	if err := q.r.QueryRow(ctx, `SELECT count(*) FROM api_keys WHERE id = $1`, keyID).Scan(&exists); err != nil {
		return fmt.Errorf("set run defaults: %w", err)
	}
	if exists == 0 {
		return fmt.Errorf("set run defaults: key %q: %w", keyID, gw.ErrNotFound)
	}
	if c == (gw.RunCaps{}) {
		_, err := q.w.Exec(ctx, `DELETE FROM run_defaults WHERE key_id = $1`, keyID)
		return err
	}
	if c.Budget < 0 || c.MaxRequests < 0 || c.Idle < 0 {
		return fmt.Errorf("set run defaults: negative cap")
	}
	_, err := q.w.Exec(ctx, `INSERT INTO run_defaults (key_id, budget, max_requests, idle_seconds) VALUES ($1, $2, $3, $4)
		ON CONFLICT (key_id) DO UPDATE SET budget = excluded.budget, max_requests = excluded.max_requests, idle_seconds = excluded.idle_seconds`,
		keyID, int64(c.Budget), c.MaxRequests, int64(c.Idle/time.Second))
	if err != nil {
		return fmt.Errorf("set run defaults: %w", err)
	}
	return nil
}

// RunDefaults reads a key's run caps (zero when it has none).
func (q Queries) RunDefaults(ctx context.Context, keyID string) (gw.RunCaps, error) {
	c, err := runDefaults(ctx, q.r, keyID)
	if err != nil {
		return c, fmt.Errorf("run defaults: %w", err)
	}
	return c, nil
}

func runDefaults(ctx context.Context, c Conn, keyID string) (gw.RunCaps, error) {
	var out gw.RunCaps
	var budget, idle int64
	rows, err := c.Query(ctx, `SELECT budget, max_requests, idle_seconds FROM run_defaults WHERE key_id = $1`, keyID)
	if err != nil {
		return out, err
	}
	defer rows.Close()
	if rows.Next() {
		if err := rows.Scan(&budget, &out.MaxRequests, &idle); err != nil {
			return out, err
		}
		out.Budget, out.Idle = gw.Money(budget), time.Duration(idle)*time.Second
	}
	return out, rows.Err()
}
