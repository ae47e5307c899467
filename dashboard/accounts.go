package dashboard

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/admin"
)

// accountsPage is the administrator's accounts page: every account with
// its money and keys, and the forms that change them (create an account,
// top up, create, rotate and revoke keys). A secret made by a form is
// shown once, in Issued, on the page that answers the form.
type accountsPage struct {
	basePage
	Accounts []accountRow
	Issued   *issuedKey
	Vendors  []vendorRow
	// MCPServers are the servers behind /mcp, the store's too.
	MCPServers []mcpServerRow
	Done       string // what the last form did
	Problem    string // why the last form was refused
	// Confirm asks the administrator to confirm a revocation before it
	// is made: the revoke button only asks; the box's button revokes.
	Confirm *admin.Key
}

type accountRow struct {
	admin.Account
	Keys []keyRow
	// Budget is what remains of the account's budgets, a line each.
	Budget []string
	// MCP is the account's MCP allow list, in a line.
	MCP string
}

type keyRow struct {
	admin.Key
	Live     bool
	LastUsed string
	Spend    string   // brief dollars
	Budget   []string // what remains of its budgets, a line each
	MCP      string   // its MCP allow list, in a line
	Runs     string   // its run defaults, in a line
}

type issuedKey struct {
	ID, Account, Secret, Replaces string
}

// accounts lists the accounts (administrator only).
func (d *Dashboard) accounts(w http.ResponseWriter, r *http.Request, v *viewer) {
	d.renderAccounts(w, r, v, &accountsPage{})
}

func (d *Dashboard) renderAccounts(w http.ResponseWriter, r *http.Request, v *viewer, p *accountsPage) {
	ctx := r.Context()
	list, err := d.admin.Accounts(ctx)
	if err != nil {
		d.fail(w, r, v, err)
		return
	}
	keys, err := d.admin.Keys(ctx)
	if err != nil {
		d.fail(w, r, v, err)
		return
	}
	byAccount := map[string][]keyRow{}
	for _, k := range keys {
		row := keyRow{Key: k, Live: k.Status != "revoked", LastUsed: "never", Spend: "$" + k.SpendUSD, Budget: budgetText(k.Budgets)}
		if m, err := gw.ParseUSD(k.SpendUSD); err == nil {
			row.Spend = usdBrief(m)
		}
		if k.LastUsedAt != nil {
			row.LastUsed = k.LastUsedAt.UTC().Format(timeLayout)
		}
		row.MCP = d.mcpText(ctx, "key", k.ID)
		row.Runs = d.runDefaultsText(ctx, k.ID)
		byAccount[k.AccountID] = append(byAccount[k.AccountID], row)
	}
	p.basePage = base(v, "Accounts", "accounts", "")
	var health []gw.VendorHealth
	if d.health != nil {
		health = d.health()
		p.Vendors = vendorRows(health, d.now())
	}
	p.MCPServers = d.mcpServers(ctx, health)
	for _, a := range list {
		p.Accounts = append(p.Accounts, accountRow{Account: a, Keys: byAccount[a.ID], Budget: budgetText(a.Budgets), MCP: d.mcpText(ctx, "account", a.ID)})
	}
	status := http.StatusOK
	if p.Problem != "" {
		status = http.StatusBadRequest
	}
	d.render(w, r, status, "accounts", p)
}

// adminForm wraps a state-changing form of the accounts page: signed in as
// the administrator, the form parsed (bounded), then f; its outcome is
// shown on the accounts page.
func (d *Dashboard) adminForm(f func(ctx context.Context, r *http.Request, p *accountsPage) error) func(http.ResponseWriter, *http.Request, *viewer) {
	return func(w http.ResponseWriter, r *http.Request, v *viewer) {
		if !v.admin || d.admin == nil {
			d.notFound(w, r)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxSigninBody)
		p := &accountsPage{}
		if err := r.ParseForm(); err != nil {
			p.Problem = "The form could not be read."
		} else if err := f(r.Context(), r, p); err != nil {
			if e, ok := err.(*gw.Error); ok && e.Code != gw.CodeInternal {
				p.Problem = e.Message
			} else {
				d.fail(w, r, v, err)
				return
			}
		}
		d.renderAccounts(w, r, v, p)
	}
}

func (d *Dashboard) createAccount(ctx context.Context, r *http.Request, p *accountsPage) error {
	a, err := d.admin.CreateAccount(ctx, strings.TrimSpace(r.PostFormValue("name")))
	if err != nil {
		return err
	}
	p.Done = "Created account " + a.Name + "."
	return nil
}

func (d *Dashboard) topUp(ctx context.Context, r *http.Request, p *accountsPage) error {
	res, err := d.admin.TopUp(ctx, r.PathValue("id"), admin.TopUpRequest{
		AmountUSD: strings.TrimSpace(r.PostFormValue("amount_usd")),
		Reference: strings.TrimSpace(r.PostFormValue("reference")),
		Note:      strings.TrimSpace(r.PostFormValue("note")),
	})
	if err != nil {
		return err
	}
	if res.Duplicate {
		p.Done = "Reference " + res.Entry.Reference + " was already credited; nothing was added."
	} else {
		p.Done = "Added $" + res.Entry.AmountUSD + " to " + res.Account.Name + "."
	}
	return nil
}

func formInt(r *http.Request, name string) (int64, error) {
	s := strings.TrimSpace(r.PostFormValue(name))
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, gw.Errorf(gw.CodeInvalidRequest, "%s must be a whole number, 0 or more", strings.ToUpper(name))
	}
	return n, nil
}

func (d *Dashboard) createKey(ctx context.Context, r *http.Request, p *accountsPage) error {
	rpm, err := formInt(r, "rpm")
	if err != nil {
		return err
	}
	tpm, err := formInt(r, "tpm")
	if err != nil {
		return err
	}
	k, err := d.admin.CreateKey(ctx, admin.KeyRequest{Account: r.PathValue("id"), Name: strings.TrimSpace(r.PostFormValue("name")), RPM: rpm, TPM: tpm,
		DailyBudgetUSD: strings.TrimSpace(r.PostFormValue("daily_budget_usd")), MonthlyBudgetUSD: strings.TrimSpace(r.PostFormValue("monthly_budget_usd"))})
	if err != nil {
		return err
	}
	p.Issued = &issuedKey{ID: k.ID, Account: k.Account, Secret: k.Secret}
	p.Done = "Created key " + k.ID + "."
	return nil
}

func (d *Dashboard) rotateKey(ctx context.Context, r *http.Request, p *accountsPage) error {
	k, err := d.admin.RotateKey(ctx, r.PathValue("id"), admin.DefaultRotateGrace)
	if err != nil {
		return err
	}
	p.Issued = &issuedKey{ID: k.ID, Account: k.Account, Secret: k.Secret, Replaces: r.PathValue("id")}
	p.Done = "Rotated " + r.PathValue("id") + ": its old secret works until " + k.Replaces.EndsAt.UTC().Format(time.Kitchen) + " UTC (" + admin.DefaultRotateGrace.String() + ")."
	return nil
}

// revokeKey revokes a key once confirmed (confirm=yes); without the
// confirmation it shows the key and asks.
func (d *Dashboard) revokeKey(ctx context.Context, r *http.Request, p *accountsPage) error {
	if r.PostFormValue("confirm") != "yes" {
		keys, err := d.admin.Keys(ctx)
		if err != nil {
			return err
		}
		for i := range keys {
			if keys[i].ID == r.PathValue("id") {
				p.Confirm = &keys[i]
				return nil
			}
		}
		return gw.Errorf(gw.CodeNotFound, "no key %q", r.PathValue("id"))
	}
	k, err := d.admin.RevokeKey(ctx, r.PathValue("id"))
	if err != nil {
		return err
	}
	p.Done = "Revoked " + k.ID + "."
	return nil
}
