package vendorreport

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gwlabs/gateway/reconcile"
)

// OpenAI reads OpenAI's organization Usage API (completions, daily
// buckets, grouped by model and API key: token rows) and Costs API
// (grouped by line item: cost rows per model, and rows for line items
// that name no model). A model's tokens and its cost are on separate
// rows, since the Costs API does not group by key.
type OpenAI struct{ cfg Config }

// NewOpenAI returns the OpenAI reader. cfg.BaseURL is the configured
// base URL with its version segment ("https://api.openai.com/v1").
func NewOpenAI(cfg Config) *OpenAI { return &OpenAI{cfg: cfg} }

// Vendor returns "openai".
func (*OpenAI) Vendor() string { return "openai" }

// openaiUsagePage is a page of GET /v1/organization/usage/completions.
type openaiUsagePage struct {
	Data []struct {
		StartTime int64 `json:"start_time"`
		Results   []struct {
			InputTokens       *int64 `json:"input_tokens"` // cached tokens included
			InputCachedTokens *int64 `json:"input_cached_tokens"`
			// InputCacheWriteTokens are the cache writes inside
			// input_tokens, where the report breaks them out (read when
			// present; without it cache writes stay in input).
			InputCacheWriteTokens *int64 `json:"input_cache_write_tokens"`
			OutputTokens          *int64 `json:"output_tokens"`
			NumModelRequests      *int64 `json:"num_model_requests"`
			APIKeyID              string `json:"api_key_id"`
			Model                 string `json:"model"`
		} `json:"results"`
	} `json:"data"`
	HasMore  bool   `json:"has_more"`
	NextPage string `json:"next_page"`
}

// openaiCostPage is a page of GET /v1/organization/costs.
type openaiCostPage struct {
	Data []struct {
		Results []struct {
			Amount struct {
				Value    decimal `json:"value"`
				Currency string  `json:"currency"`
			} `json:"amount"`
			LineItem string `json:"line_item"`
		} `json:"results"`
	} `json:"data"`
	HasMore  bool   `json:"has_more"`
	NextPage string `json:"next_page"`
}

func (o *OpenAI) header() http.Header {
	return http.Header{"Authorization": {"Bearer " + string(o.cfg.AdminKey)}}
}

// Day reads day's usage and costs. Without an admin key it returns
// reconcile.ErrNoCredentials.
func (o *OpenAI) Day(ctx context.Context, day time.Time) (reconcile.Report, error) {
	if o.cfg.AdminKey == "" {
		return reconcile.Report{}, reconcile.ErrNoCredentials
	}
	d, err := dayStart(day)
	if err != nil {
		return reconcile.Report{}, err
	}
	base := o.cfg.base("https://api.openai.com/v1")
	q := url.Values{
		"start_time":   {strconv.FormatInt(d.Unix(), 10)},
		"end_time":     {strconv.FormatInt(d.Add(24*time.Hour).Unix(), 10)},
		"bucket_width": {"1d"},
		"group_by":     {"model", "api_key_id"},
		"limit":        {"1"},
	}
	var rs rows
	err = paginate(ctx, func(ctx context.Context, page string) (bool, string, error) {
		var p openaiUsagePage
		if _, err := o.cfg.get(ctx, "openai", withPage(base+"/organization/usage/completions", q, page), o.header(), &p); err != nil {
			return false, "", err
		}
		for _, b := range p.Data {
			for _, r := range b.Results {
				k := rowKey{model: o.cfg.model("openai", r.Model), key: r.APIKeyID}
				if r.InputTokens != nil {
					in := *r.InputTokens
					if r.InputCachedTokens != nil {
						in -= *r.InputCachedTokens
					}
					if r.InputCacheWriteTokens != nil {
						in -= *r.InputCacheWriteTokens
					}
					rs.addTokens(k, reconcile.TokensInput, &in)
				}
				rs.addTokens(k, reconcile.TokensCacheRead, r.InputCachedTokens)
				rs.addTokens(k, reconcile.TokensCacheWrite, r.InputCacheWriteTokens)
				rs.addTokens(k, reconcile.TokensOutput, r.OutputTokens)
				rs.addTokens(k, reconcile.TokensRequests, r.NumModelRequests)
			}
		}
		return p.HasMore, p.NextPage, nil
	})
	if err != nil {
		return reconcile.Report{}, err
	}
	cq := url.Values{
		"start_time":   q["start_time"],
		"end_time":     q["end_time"],
		"bucket_width": {"1d"},
		"group_by":     {"line_item"},
		"limit":        {"1"},
	}
	err = paginate(ctx, func(ctx context.Context, page string) (bool, string, error) {
		var p openaiCostPage
		if _, err := o.cfg.get(ctx, "openai", withPage(base+"/organization/costs", cq, page), o.header(), &p); err != nil {
			return false, "", err
		}
		for _, b := range p.Data {
			for _, r := range b.Results {
				if c := strings.ToLower(r.Amount.Currency); c != "" && c != "usd" {
					return false, "", fmt.Errorf("openai report: cost in %q, not USD", r.Amount.Currency)
				}
				if !r.Amount.Value.set {
					return false, "", fmt.Errorf("openai report: cost result without an amount")
				}
				model, _, ok := openaiLineItem(r.LineItem)
				k := rowKey{item: firstOf(r.LineItem, "unattributed")}
				if ok {
					k = rowKey{model: o.cfg.model("openai", model)}
				}
				rs.addCost(k, r.Amount.Value, perUSD)
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
	return reconcile.Report{Vendor: "openai", Day: d, Rows: out, Complete: o.cfg.complete(d)}, nil
}

// openaiLineItem splits a Costs API line item "gpt-4.1-2025-04-14, input"
// into the model and the item; ok false for a line item that names no
// model ("web search tool calls").
func openaiLineItem(s string) (model, item string, ok bool) {
	m, it, found := strings.Cut(s, ", ")
	if !found || m == "" || strings.ContainsAny(m, " ") {
		return "", s, false
	}
	return m, it, true
}

// withPage adds page to q's encoding of u.
func withPage(u string, q url.Values, page string) string {
	v := url.Values{}
	for k, vs := range q {
		v[k] = vs
	}
	if page != "" {
		v.Set("page", page)
	}
	return u + "?" + v.Encode()
}

// paginate calls read with each page token until it reports no more,
// refusing a token that repeats (a vendor loop) and more than maxPages.
func paginate(ctx context.Context, read func(ctx context.Context, page string) (more bool, next string, err error)) error {
	page := ""
	seen := map[string]bool{}
	for i := 0; ; i++ {
		if i >= maxPages {
			return fmt.Errorf("vendorreport: more than %d pages", maxPages)
		}
		more, next, err := read(ctx, page)
		if err != nil {
			return err
		}
		if !more {
			return nil
		}
		if next == "" || seen[next] {
			return fmt.Errorf("vendorreport: has_more without a new next_page")
		}
		seen[next] = true
		page = next
	}
}

var _ reconcile.Source = (*OpenAI)(nil)
