// Package providertest is the contract every gw.Provider keeps, as a test
// suite run against the vendor fakes (fakevendor), the way storetest is
// for stores. A provider package calls Run from its own tests with an
// adapter pointed at a fakevendor.Server:
//
//	providertest.Run(t, providertest.Vendor{Fake: fake, Name: "groq", Provider: p})
//
// The suite asks for the canonical request through the provider's Codec,
// so it needs no knowledge of the vendor's wire format, and checks: a
// whole answer and a stream decode to the fake's reply with its usage;
// the vendor's failures come back as the gateway's error codes (a 429
// with its Retry-After, an unknown model as not_found); a stream cut by
// an in-stream error ends with an Error event; cancelling the context
// aborts a call the vendor never answers; a non-JSON body is an error,
// not a panic or an empty answer. The provider must be built without
// retries (upstream.Config{MaxRetries: -1}), so each failure is the
// fake's first answer.
package providertest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/fakevendor"
)

// Vendor is one provider under test and the fake it talks to.
type Vendor struct {
	// Fake serves the vendor; the provider's base URL is
	// Fake.BaseURL(Name) and its key Fake.APIKey(Name).
	Fake *fakevendor.Server
	// Name is the fake's vendor name ("openai", "groq", "anthropic",
	// "google", ...).
	Name string
	// Provider is the adapter; it must implement gw.Codec.
	Provider gw.Provider
	// Model is the model asked for (default "suite-model").
	Model string
}

// StartFake starts the project's fake vendors for a suite run and closes
// them when the test ends.
func StartFake(t *testing.T) *fakevendor.Server {
	t.Helper()
	fake, err := fakevendor.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Close() })
	return fake
}

// Run runs the contract as subtests of t.
func Run(t *testing.T, v Vendor) {
	t.Helper()
	if v.Model == "" {
		v.Model = "suite-model"
	}
	if _, ok := v.Provider.(gw.Codec); !ok {
		t.Fatalf("%s: the provider is not a gw.Codec", v.Name)
	}
	t.Run("Identity", v.testIdentity)
	t.Run("Whole", v.testWhole)
	t.Run("Stream", v.testStream)
	t.Run("Errors", v.testErrors)
	t.Run("RateLimited", v.testRateLimited)
	t.Run("UnknownModel", v.testUnknownModel)
	t.Run("StreamError", v.testStreamError)
	t.Run("Cancel", v.testCancel)
	t.Run("Malformed", v.testMalformed)
}

func (v Vendor) codec() gw.Codec { return v.Provider.(gw.Codec) }

// call encodes a one-message request with text as the user's words
// (directives included) and sends it.
func (v Vendor) call(ctx context.Context, t *testing.T, model, text string, stream bool) (*gw.Upstream, error) {
	t.Helper()
	maxTokens := 256
	body, err := v.codec().EncodeRequest(&gw.Request{
		Model:        model,
		Messages:     []gw.Message{{Role: gw.RoleUser, Content: []gw.Part{{Type: gw.PartText, Text: text}}}},
		MaxTokens:    &maxTokens,
		Stream:       stream,
		IncludeUsage: stream,
	})
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return v.Provider.Send(ctx, &gw.Call{RequestID: "req_suite", Model: model, Stream: stream, Body: body, Header: http.Header{}})
}

func (v Vendor) testIdentity(t *testing.T) {
	if v.Provider.Name() != v.Name {
		t.Errorf("Name() = %q, want %q", v.Provider.Name(), v.Name)
	}
	switch v.Provider.Shape() {
	case gw.ShapeC, gw.ShapeM, gw.ShapeG:
	default:
		t.Errorf("Shape() = %q: not a vendor shape", v.Provider.Shape())
	}
}

// text joins the text parts of a response.
func text(parts []gw.Part) string {
	var b strings.Builder
	for _, p := range parts {
		if p.Type == gw.PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

func (v Vendor) testWhole(t *testing.T) {
	up, err := v.call(t.Context(), t, v.Model, "Say hello.", false)
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	if up.Status/100 != 2 {
		t.Errorf("status %d, want 2xx", up.Status)
	}
	body, err := io.ReadAll(up.Body)
	up.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	r, err := v.codec().DecodeResponse(body)
	if err != nil {
		t.Fatalf("decode: %v\n%s", err, body)
	}
	if got, want := text(r.Content), fakevendor.DefaultText(v.Name, v.Model); got != want {
		t.Errorf("text %q, want %q", got, want)
	}
	if r.StopReason != gw.StopEndTurn {
		t.Errorf("stop reason %q, want %q", r.StopReason, gw.StopEndTurn)
	}
	checkUsage(t, &r.Usage, fakevendor.Tokens(len(fakevendor.DefaultText(v.Name, v.Model))))
}

// checkUsage asks that the prompt was counted and that the output less
// its reasoning is the fake's count of the reply text (DeepSeek reasons
// unasked).
func checkUsage(t *testing.T, u *gw.Usage, output int) {
	t.Helper()
	if u == nil {
		t.Fatal("no usage reported")
	}
	if in := u.InputTokens + u.CacheReadTokens + u.CacheWrite5mTokens + u.CacheWrite1hTokens; in <= 0 {
		t.Errorf("usage %+v: no input tokens", *u)
	}
	if u.OutputTokens-u.ReasoningTokens != int64(output) {
		t.Errorf("usage %+v: output %d less reasoning %d, want %d", *u, u.OutputTokens, u.ReasoningTokens, output)
	}
}

func (v Vendor) testStream(t *testing.T) {
	up, err := v.call(t.Context(), t, v.Model, "Say hello.", true)
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	es := v.codec().DecodeStream(up.Body)
	defer es.Close()
	var (
		b      strings.Builder
		usage  *gw.Usage
		stop   gw.StopReason
		deltas int
		seen   []gw.EventType
		blocks = map[int]gw.PartType{}
	)
	for {
		ev, err := es.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("recv: %v", err)
		}
		seen = append(seen, ev.Type)
		switch ev.Type {
		case gw.EventBlockStart:
			if ev.Part != nil {
				blocks[ev.Index] = ev.Part.Type
			}
		case gw.EventDelta:
			if blocks[ev.Index] == gw.PartText {
				b.WriteString(ev.Text)
				deltas++
			}
		case gw.EventFinish:
			usage, stop = ev.Usage, ev.StopReason
		case gw.EventError:
			t.Fatalf("error event: %v", ev.Err)
		}
	}
	if len(seen) == 0 || seen[0] != gw.EventStart || seen[len(seen)-1] != gw.EventFinish {
		t.Errorf("events %v: want Start first and Finish last", seen)
	}
	want := fakevendor.DefaultText(v.Name, v.Model)
	if b.String() != want {
		t.Errorf("streamed text %q, want %q", b.String(), want)
	}
	if deltas < 2 {
		t.Errorf("%d deltas: the fake streams one word a chunk", deltas)
	}
	if stop != gw.StopEndTurn {
		t.Errorf("stop reason %q, want %q", stop, gw.StopEndTurn)
	}
	checkUsage(t, usage, fakevendor.Tokens(len(want)))
}

// wantError asks that err is a *gw.Error of code whose message names
// neither the key nor the fake's address.
func (v Vendor) wantError(t *testing.T, err error, code gw.Code) *gw.Error {
	t.Helper()
	var e *gw.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want a *gw.Error of %s", err, err, code)
	}
	if e.Code != code {
		t.Errorf("code %s (%q), want %s", e.Code, e.Message, code)
	}
	if strings.Contains(e.Message, v.Fake.APIKey(v.Name)) || strings.Contains(e.Message, v.Fake.URL()) {
		t.Errorf("message leaks the key or the address: %q", e.Message)
	}
	return e
}

func (v Vendor) testErrors(t *testing.T) {
	for _, tt := range []struct {
		status int
		code   gw.Code
	}{
		{400, gw.CodeInvalidRequest},
		{500, gw.CodeUpstream},
		{503, gw.CodeOverloaded},
	} {
		for _, stream := range []bool{false, true} {
			_, err := v.call(t.Context(), t, v.Model, "[fake:status="+strconv.Itoa(tt.status)+"]", stream)
			if err == nil {
				t.Errorf("status %d stream=%v: no error", tt.status, stream)
				continue
			}
			v.wantError(t, err, tt.code)
		}
	}
}

// testRateLimited: a 429 is rate_limited with the wait the vendor asked
// for (Retry-After, or Google's RetryInfo), so the caller is told when
// to come back. The fake's 429 says nothing of the key's own limits, so
// it is about the request: the error is retryable, not the account-level
// refusal (an exhausted quota) that a client must not retry.
func (v Vendor) testRateLimited(t *testing.T) {
	_, err := v.call(t.Context(), t, v.Model, "[fake:status=429][fake:retry=7]", false)
	e := v.wantError(t, err, gw.CodeRateLimited)
	if e.RetryAfter != 7*time.Second {
		t.Errorf("retry after %v, want 7s", e.RetryAfter)
	}
	if e.NoRetry {
		t.Error("a request's 429 is marked not to be retried")
	}
}

func (v Vendor) testUnknownModel(t *testing.T) {
	_, err := v.call(t.Context(), t, v.Model+"-missing", "Say hello.", false)
	v.wantError(t, err, gw.CodeNotFound)
}

func (v Vendor) testStreamError(t *testing.T) {
	up, err := v.call(t.Context(), t, v.Model, "[fake:error-after=2]", true)
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	es := v.codec().DecodeStream(up.Body)
	defer es.Close()
	var last gw.Event
	for {
		ev, err := es.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("recv: %v", err)
		}
		last = ev
		if ev.Type == gw.EventFinish {
			t.Fatal("a stream cut by the vendor's error finished")
		}
	}
	if last.Type != gw.EventError || last.Err == nil {
		t.Fatalf("last event %+v, want an Error event", last)
	}
	if last.Err.Code == "" || last.Err.Code == gw.CodeInternal {
		t.Errorf("error event code %q: want the vendor's failure mapped", last.Err.Code)
	}
}

// testCancel: a call the vendor never answers returns once the context
// is cancelled, and the vendor sees the client go away.
func (v Vendor) testCancel(t *testing.T) {
	before, cancelled := len(v.Fake.Requests()), 0
	for _, r := range v.Fake.Requests() {
		if r.Cancelled && r.Done {
			cancelled++
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := v.call(ctx, t, v.Model, "[fake:hang][fake:id=cancel]", false)
		done <- err
	}()
	// Cancel once the fake holds the call.
	for len(v.Fake.Requests()) == before {
		select {
		case err := <-done:
			t.Fatalf("returned before the fake saw the call: %v", err)
		default:
			time.Sleep(time.Millisecond)
		}
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a cancelled call succeeded")
	}
	if err := v.Fake.WaitCancelled(t.Context(), cancelled+1); err != nil {
		t.Fatalf("the fake did not see the call cancelled: %v", err)
	}
}

// testMalformed: a 200 whose body is not the vendor's JSON is an error
// from DecodeResponse, never an empty answer.
func (v Vendor) testMalformed(t *testing.T) {
	up, err := v.call(t.Context(), t, v.Model, "[fake:malformed]", false)
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	body, err := io.ReadAll(up.Body)
	up.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if r, err := v.codec().DecodeResponse(body); err == nil {
		t.Fatalf("a malformed body decoded to %+v", r)
	}
}
