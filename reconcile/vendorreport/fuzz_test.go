package vendorreport_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gwlabs/gateway/reconcile"
	"github.com/gwlabs/gateway/reconcile/vendorreport"
)

// answer is a transport that answers every request with status and body.
type answer struct {
	status int
	body   string
}

func (a answer) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: a.status, Body: io.NopCloser(strings.NewReader(a.body)), Header: http.Header{}, Request: r}, nil
}

func hostile(body string) vendorreport.Config {
	return vendorreport.Config{
		BaseURL: "http://vendor.invalid", AdminKey: "admin",
		Client: &http.Client{Transport: answer{status: 200, body: body}},
		Now:    func() time.Time { return time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC) },
	}
}

var fuzzDay = time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)

// checkReport holds for any report a reader accepts: every row says
// something, and reading the same answer twice gives the same report.
func checkReport(t *testing.T, src func() reconcile.Source) {
	rep, err := src().Day(context.Background(), fuzzDay)
	if err != nil {
		return
	}
	for _, r := range rep.Rows {
		if r.Tokens == nil && !r.HasCost {
			t.Fatalf("empty row %+v", r)
		}
		if r.Model == "" && r.LineItem == "" && r.Tokens == nil {
			t.Fatalf("a cost row names neither a model nor a line item: %+v", r)
		}
	}
	again, err := src().Day(context.Background(), fuzzDay)
	if err != nil || len(again.Rows) != len(rep.Rows) {
		t.Fatalf("second read: %d rows, %v; first %d", len(again.Rows), err, len(rep.Rows))
	}
	for i := range rep.Rows {
		if rep.Rows[i].Cost != again.Rows[i].Cost || rep.Rows[i].Model != again.Rows[i].Model {
			t.Fatalf("row %d differs: %+v vs %+v", i, rep.Rows[i], again.Rows[i])
		}
	}
}

func FuzzOpenAIReport(f *testing.F) {
	for _, s := range []string{
		`{"object":"page","data":[{"object":"bucket","start_time":1763596800,"end_time":1763683200,"results":[{"input_tokens":1100,"input_cached_tokens":100,"output_tokens":200,"num_model_requests":1,"api_key_id":"key_x","model":"gpt-4.1"}]}],"has_more":false,"next_page":null}`,
		`{"data":[{"results":[{"amount":{"value":0.1,"currency":"usd"},"line_item":"gpt-4.1, input"},{"amount":{"value":"1e-3","currency":"usd"},"line_item":"web search"}]}],"has_more":false}`,
		`{"data":[],"has_more":true,"next_page":"p"}`,
		`{"data":[{"results":[{"amount":{"value":1e999,"currency":"usd"},"line_item":"x, y"}]}]}`,
		`{"data":[{"results":[{"amount":{"value":92233720368547758.07},"line_item":"m, input"}]}]}`,
		`{"data":null}`, `[]`, `null`, ``, `{"data":[{"results":[null]}]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		checkReport(t, func() reconcile.Source { return vendorreport.NewOpenAI(hostile(body)) })
	})
}

func FuzzAnthropicReport(f *testing.F) {
	for _, s := range []string{
		`{"data":[{"starting_at":"2026-11-20T00:00:00Z","ending_at":"2026-11-21T00:00:00Z","results":[{"uncached_input_tokens":1000,"cache_read_input_tokens":100,"cache_creation":{"ephemeral_5m_input_tokens":5,"ephemeral_1h_input_tokens":1},"output_tokens":200,"api_key_id":"apikey_01x","model":"claude-sonnet-4-5"}]}],"has_more":false,"next_page":null}`,
		`{"data":[{"results":[{"currency":"USD","amount":"123.45","model":"claude-sonnet-4-5","cost_type":"tokens","token_type":"output_tokens"},{"currency":"USD","amount":"0.5","description":"Web search"}]}],"has_more":false}`,
		`{"data":[{"results":[{"currency":"EUR","amount":"1"}]}]}`,
		`{"data":[{"results":[{"amount":"1/3"},{"amount":"NaN"},{"amount":"-Inf"},{"amount":"0x10"}]}]}`,
		`{"data":[{"results":[{"cache_creation":null,"cache_creation_input_tokens":9223372036854775807}]}]}`,
		`{"has_more":true,"next_page":""}`, `{}`, `"x"`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		checkReport(t, func() reconcile.Source { return vendorreport.NewAnthropic(hostile(body)) })
	})
}

func FuzzOpenRouterGeneration(f *testing.F) {
	for _, s := range []string{
		`{"data":{"id":"gen-1","total_cost":0.0015,"native_tokens_prompt":10}}`,
		`{"data":{"id":"gen-1","total_cost":"0.1"}}`, `{"data":{"total_cost":-1}}`,
		`{"data":{"total_cost":1e400}}`, `{"data":null}`, `{}`, `{"data":{"usage":1,"limit":null}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		o := vendorreport.NewOpenRouter(hostile(body))
		c, ok, err := o.GenerationCost(context.Background(), "gen-1")
		if (ok && err != nil) || (!ok && c != 0) || (ok && c < 0) {
			t.Fatalf("cost %d ok %v err %v", c, ok, err)
		}
		if _, err := o.KeyUsage(context.Background(), "k"); errors.Is(err, reconcile.ErrNoCredentials) {
			t.Fatal("a key given is not missing credentials")
		}
	})
}

func FuzzDeepSeekBalance(f *testing.F) {
	for _, s := range []string{
		`{"is_available":true,"balance_infos":[{"currency":"USD","total_balance":"110.00","granted_balance":"10.00","topped_up_balance":"100.00"}]}`,
		`{"balance_infos":[{"currency":"CNY","total_balance":"110.00"}]}`,
		`{"balance_infos":[{"currency":"USD","total_balance":"1e40"}]}`,
		`{"balance_infos":[{"currency":"USD"}]}`, `{"balance_infos":null}`, `1`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		b1, err1 := vendorreport.NewDeepSeek(hostile(body)).Balance(context.Background())
		b2, err2 := vendorreport.NewDeepSeek(hostile(body)).Balance(context.Background())
		if b1 != b2 || (err1 == nil) != (err2 == nil) {
			t.Fatalf("two reads differ: %d %v / %d %v", b1, err1, b2, err2)
		}
	})
}
