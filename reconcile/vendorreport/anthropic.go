package vendorreport

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gwlabs/gateway/reconcile"
)

// AnthropicVersion is the anthropic-version header the reader sends.
const AnthropicVersion = "2023-06-01"

// Anthropic reads the Admin API's usage report (messages, daily buckets,
// grouped by model and API key: token rows) and cost report (grouped by
// description: cost rows per model, and rows for costs that name no
// model). Cost amounts are decimal strings in cents ("123.45" is
// $1.2345). It needs an admin key (sk-ant-admin...).
type Anthropic struct{ cfg Config }

// NewAnthropic returns the Anthropic reader. cfg.BaseURL is the
// configured base URL without a version ("https://api.anthropic.com").
func NewAnthropic(cfg Config) *Anthropic { return &Anthropic{cfg: cfg} }

// Vendor returns "anthropic".
func (*Anthropic) Vendor() string { return "anthropic" }

type anthropicUsagePage struct {
	Data []struct {
		StartingAt string `json:"starting_at"`
		Results    []struct {
			UncachedInputTokens  *int64 `json:"uncached_input_tokens"`
			CacheReadInputTokens *int64 `json:"cache_read_input_tokens"`
			CacheCreation        *struct {
				Ephemeral5m *int64 `json:"ephemeral_5m_input_tokens"`
				Ephemeral1h *int64 `json:"ephemeral_1h_input_tokens"`
			} `json:"cache_creation"`
			// CacheCreationInputTokens is the older flat form, read when
			// cache_creation is absent.
			CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
			OutputTokens             *int64 `json:"output_tokens"`
			APIKeyID                 string `json:"api_key_id"`
			Model                    string `json:"model"`
		} `json:"results"`
	} `json:"data"`
	HasMore  bool   `json:"has_more"`
	NextPage string `json:"next_page"`
}

type anthropicCostPage struct {
	Data []struct {
		Results []struct {
			Currency    string  `json:"currency"`
			Amount      decimal `json:"amount"` // cents
			Model       string  `json:"model"`
			Description string  `json:"description"`
			CostType    string  `json:"cost_type"`
			TokenType   string  `json:"token_type"`
		} `json:"results"`
	} `json:"data"`
	HasMore  bool   `json:"has_more"`
	NextPage string `json:"next_page"`
}

func (a *Anthropic) header() http.Header {
	return http.Header{"X-Api-Key": {string(a.cfg.AdminKey)}, "Anthropic-Version": {AnthropicVersion}}
}

// Day reads day's usage and cost reports. Without an admin key it
// returns reconcile.ErrNoCredentials.
func (a *Anthropic) Day(ctx context.Context, day time.Time) (reconcile.Report, error) {
	if a.cfg.AdminKey == "" {
		return reconcile.Report{}, reconcile.ErrNoCredentials
	}
	d, err := dayStart(day)
	if err != nil {
		return reconcile.Report{}, err
	}
	base := a.cfg.base("https://api.anthropic.com")
	q := url.Values{
		"starting_at":  {d.Format(time.RFC3339)},
		"ending_at":    {d.Add(24 * time.Hour).Format(time.RFC3339)},
		"bucket_width": {"1d"},
		"group_by[]":   {"model", "api_key_id"},
		"limit":        {"1"},
	}
	var rs rows
	err = paginate(ctx, func(ctx context.Context, page string) (bool, string, error) {
		var p anthropicUsagePage
		if _, err := a.cfg.get(ctx, "anthropic", withPage(base+"/v1/organizations/usage_report/messages", q, page), a.header(), &p); err != nil {
			return false, "", err
		}
		for _, b := range p.Data {
			for _, r := range b.Results {
				k := rowKey{model: a.cfg.model("anthropic", r.Model), key: r.APIKeyID}
				rs.addTokens(k, reconcile.TokensInput, r.UncachedInputTokens)
				rs.addTokens(k, reconcile.TokensCacheRead, r.CacheReadInputTokens)
				if cc := r.CacheCreation; cc != nil && (cc.Ephemeral5m != nil || cc.Ephemeral1h != nil) {
					rs.addTokens(k, reconcile.TokensCacheWrite, cc.Ephemeral5m)
					rs.addTokens(k, reconcile.TokensCacheWrite, cc.Ephemeral1h)
				} else {
					rs.addTokens(k, reconcile.TokensCacheWrite, r.CacheCreationInputTokens)
				}
				rs.addTokens(k, reconcile.TokensOutput, r.OutputTokens)
			}
		}
		return p.HasMore, p.NextPage, nil
	})
	if err != nil {
		return reconcile.Report{}, err
	}
	cq := url.Values{
		"starting_at": q["starting_at"],
		"ending_at":   q["ending_at"],
		"group_by[]":  {"description"},
		"limit":       {"1"},
	}
	err = paginate(ctx, func(ctx context.Context, page string) (bool, string, error) {
		var p anthropicCostPage
		if _, err := a.cfg.get(ctx, "anthropic", withPage(base+"/v1/organizations/cost_report", cq, page), a.header(), &p); err != nil {
			return false, "", err
		}
		for _, b := range p.Data {
			for _, r := range b.Results {
				if c := strings.ToUpper(r.Currency); c != "" && c != "USD" {
					return false, "", fmt.Errorf("anthropic report: cost in %q, not USD", r.Currency)
				}
				if !r.Amount.set {
					return false, "", fmt.Errorf("anthropic report: cost result without an amount")
				}
				k := rowKey{model: a.cfg.model("anthropic", r.Model)}
				if r.Model == "" {
					k = rowKey{item: firstOf(r.Description, r.CostType, "unattributed")}
				}
				rs.addCost(k, r.Amount, perCent)
			}
		}
		return p.HasMore, p.NextPage, nil
	})
	if err != nil {
		return reconcile.Report{}, err
	}
	out, err := rs.report()
	if err != nil {
		return reconcile.Report{}, err
	}
	return reconcile.Report{Vendor: "anthropic", Day: d, Rows: out, Complete: a.cfg.complete(d)}, nil
}

func firstOf(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

var _ reconcile.Source = (*Anthropic)(nil)
