package openai

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/gwlabs/gateway/internal/golden"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/sse"
)

// Golden files live in testdata/<direction>/*.txtar; each archive holds
// the input of one case and the expected outputs side by side. Run
// `go test ./shape/openai -update` to rewrite the outputs.
var update = flag.Bool("update", false, "rewrite golden files in testdata")

// goldenMeta is the ResponseMeta every golden client output uses.
var goldenMeta = ResponseMeta{ID: "chatcmpl_01JGOLDEN0000000000000000", Model: "test-model", Created: 1767225600}

// goldenCase is a golden archive bound to its subtest.
type goldenCase struct {
	*golden.Case
	t *testing.T
}

func (g *goldenCase) input(name string) []byte      { return g.Input(g.t, name) }
func (g *goldenCase) check(name string, got []byte) { g.Check(g.t, name, got) }
func (g *goldenCase) drop(name string)              { g.Drop(g.t, name) }

// loadGoldens loads testdata/dir; see internal/golden.
func loadGoldens(t *testing.T, dir string) []*goldenCase {
	var gs []*goldenCase
	for _, c := range golden.Load(t, dir, *update) {
		gs = append(gs, &goldenCase{Case: c})
	}
	return gs
}

// runGoldens runs fn on every archive of dir as a subtest and saves what
// -update recorded.
func runGoldens(t *testing.T, dir string, fn func(g *goldenCase)) {
	for _, g := range loadGoldens(t, dir) {
		t.Run(g.Name(), func(t *testing.T) {
			g.t = t
			fn(g)
			g.Save(t)
		})
	}
}

func dialectOf(g *goldenCase) *Dialect {
	g.t.Helper()
	name := strings.TrimSpace(string(g.input("dialect")))
	d, ok := DialectFor(name)
	if !ok {
		g.t.Fatalf("unknown dialect %q", name)
	}
	return d
}

// indent pretty-prints JSON for golden files.
func indent(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "", "  "); err != nil {
		t.Fatalf("invalid JSON %q: %v", b, err)
	}
	return buf.Bytes()
}

// canonicalJSON renders a canonical value readably: Go field names, with
// empty strings, false, null and empty lists/objects left out.
func canonicalJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&x); err != nil {
		t.Fatal(err)
	}
	x = prune(x)
	out, err := json.MarshalIndent(x, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func prune(x any) any {
	switch v := x.(type) {
	case map[string]any:
		for k, e := range v {
			e = prune(e)
			if isZeroJSON(e) {
				delete(v, k)
			} else {
				v[k] = e
			}
		}
		return v
	case []any:
		for i := range v {
			v[i] = prune(v[i])
		}
		return v
	}
	return x
}

func isZeroJSON(x any) bool {
	switch v := x.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case bool:
		return !v
	case map[string]any:
		return len(v) == 0
	case []any:
		return len(v) == 0
	}
	return false
}

func errorText(err error) []byte {
	var ge *gw.Error
	if e, ok := err.(*gw.Error); ok {
		ge = e
	} else {
		return []byte("non-gw error: " + err.Error())
	}
	return []byte(string(ge.Code) + ": " + ge.Message)
}

func TestGoldenEncodeRequest(t *testing.T) {
	runGoldens(t, "encode_request", func(g *goldenCase) {
		var r gw.Request
		if err := json.Unmarshal(g.input("canonical.json"), &r); err != nil {
			g.t.Fatal(err)
		}
		body, err := EncodeRequest(&r, dialectOf(g))
		if err != nil {
			g.check("error", errorText(err))
			g.drop("vendor.json")
			return
		}
		if !json.Valid(body) {
			g.t.Fatalf("invalid JSON: %s", body)
		}
		g.drop("error")
		g.check("vendor.json", indent(g.t, body))
		g.check("dropped", []byte(strings.Join(r.Dropped, "\n")))
	})
}

func TestGoldenDecodeRequest(t *testing.T) {
	runGoldens(t, "decode_request", func(g *goldenCase) {
		r, err := DecodeRequest(g.input("client.json"))
		if err != nil {
			if gw.ErrorCode(err) != gw.CodeInvalidRequest {
				g.t.Errorf("error code %q, want invalid_request", gw.ErrorCode(err))
			}
			g.check("error", errorText(err))
			g.drop("canonical.json")
			return
		}
		g.drop("error")
		g.check("canonical.json", canonicalJSON(g.t, r))
		// The canonical request must also encode for OpenAI.
		if _, ok := g.File("openai.json"); ok || *update {
			d, _ := DialectFor("openai")
			body, err := EncodeRequest(r, d)
			if err != nil {
				g.check("openai.json", errorText(err))
			} else {
				g.check("openai.json", indent(g.t, body))
			}
		}
	})
}

func TestGoldenResponse(t *testing.T) {
	runGoldens(t, "response", func(g *goldenCase) {
		resp, err := DecodeResponse(g.input("upstream.json"), dialectOf(g))
		if err != nil {
			g.check("error", errorText(err))
			g.drop("canonical.json")
			g.drop("client.json")
			return
		}
		g.drop("error")
		g.check("canonical.json", canonicalJSON(g.t, resp))
		body, err := EncodeResponse(resp, goldenMeta)
		if err != nil {
			g.t.Fatal(err)
		}
		g.check("client.json", indent(g.t, body))
		u, err := UsageFromBody(g.input("upstream.json"))
		if err != nil {
			g.t.Fatal(err)
		}
		if u != resp.Usage {
			g.t.Errorf("UsageFromBody %+v != DecodeResponse usage %+v", u, resp.Usage)
		}
	})
}

// formatEvent renders one canonical event as a golden line.
func formatEvent(ev gw.Event) string {
	switch ev.Type {
	case gw.EventStart:
		return fmt.Sprintf("start id=%q model=%q", ev.ID, ev.Model)
	case gw.EventBlockStart:
		s := fmt.Sprintf("block_start %d %s", ev.Index, ev.Part.Type)
		if ev.Part.Type == gw.PartToolCall {
			s += fmt.Sprintf(" id=%q name=%q", ev.Part.ToolCallID, ev.Part.ToolName)
		}
		return s
	case gw.EventDelta:
		s := fmt.Sprintf("delta %d %s", ev.Index, strconv.Quote(ev.Text))
		if ev.Signature != "" {
			s += " signature=" + strconv.Quote(ev.Signature)
		}
		return s
	case gw.EventBlockStop:
		return fmt.Sprintf("block_stop %d", ev.Index)
	case gw.EventFinish:
		u := "nil"
		if ev.Usage != nil {
			u = fmt.Sprintf("%+v", *ev.Usage)
			if ev.Usage.Hosted == (gw.Hosted{}) {
				// Goldens without hosted units keep their form.
				u = strings.Replace(u, fmt.Sprintf(" Hosted:%+v", gw.Hosted{}), "", 1)
			}
		}
		return fmt.Sprintf("finish stop=%s usage=%s", ev.StopReason, u)
	case gw.EventError:
		return fmt.Sprintf("error %s: %s", ev.Err.Code, ev.Err.Message)
	}
	return fmt.Sprintf("unknown event %d", ev.Type)
}

// decodeAll drains a stream decoder over r, returning the events as
// golden lines and the events themselves.
func decodeAll(t testing.TB, r io.Reader, d *Dialect) (string, []gw.Event) {
	t.Helper()
	s := NewStreamDecoder(io.NopCloser(r), d)
	defer s.Close()
	var lines []string
	var evs []gw.Event
	for i := 0; ; i++ {
		ev, err := s.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("Recv: %v", err)
		}
		if i > 100000 {
			t.Fatal("stream does not end")
		}
		lines = append(lines, formatEvent(ev))
		evs = append(evs, ev)
	}
	return strings.Join(lines, "\n"), evs
}

// splitReader returns the input in pieces of 1..n bytes, cycling.
type splitReader struct {
	data []byte
	n, i int
}

func (r *splitReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	r.i = r.i%r.n + 1
	k := min(r.i, len(p), len(r.data))
	copy(p, r.data[:k])
	r.data = r.data[k:]
	return k, nil
}

func TestGoldenStream(t *testing.T) {
	runGoldens(t, "stream", func(g *goldenCase) {
		d := dialectOf(g)
		upstream := g.input("upstream.sse")
		whole, evs := decodeAll(g.t, bytes.NewReader(upstream), d)
		g.check("events", []byte(whole))
		// Split at every byte boundary, and in uneven pieces.
		if got, _ := decodeAll(g.t, iotest.OneByteReader(bytes.NewReader(upstream)), d); got != whole {
			g.t.Errorf("one-byte reads differ:\n%s\nwant:\n%s", got, whole)
		}
		for i := 1; i < len(upstream); i++ {
			r := io.MultiReader(bytes.NewReader(upstream[:i]), bytes.NewReader(upstream[i:]))
			if got, _ := decodeAll(g.t, iotest.HalfReader(r), d); got != whole {
				g.t.Fatalf("split at byte %d differs:\n%s\nwant:\n%s", i, got, whole)
			}
		}
		if got, _ := decodeAll(g.t, &splitReader{data: upstream, n: 7}, d); got != whole {
			g.t.Errorf("uneven reads differ")
		}
		checkWellFormed(g.t, evs)
		checkMeterAgrees(g.t, upstream, evs)

		for _, includeUsage := range []bool{true, false} {
			var out writeRecorder
			enc := NewStreamEncoder(&out, goldenMeta, includeUsage)
			for _, ev := range evs {
				if err := enc.Encode(ev); err != nil {
					g.t.Fatal(err)
				}
			}
			checkClientStream(g.t, out.writes)
			if includeUsage {
				g.check("client.sse", out.Bytes())
			}
		}
	})
}

// checkWellFormed asserts the canonical stream contract: Start, blocks
// strictly sequential with indexes from 0, then Finish or Error last.
func checkWellFormed(t *testing.T, evs []gw.Event) {
	t.Helper()
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	last := evs[len(evs)-1]
	if last.Type != gw.EventFinish && last.Type != gw.EventError {
		t.Fatalf("last event is %s, want finish or error", formatEvent(last))
	}
	open, next := -1, 0
	for i, ev := range evs {
		switch ev.Type {
		case gw.EventStart:
			if i != 0 {
				t.Errorf("start at %d", i)
			}
		case gw.EventBlockStart:
			if open >= 0 || ev.Index != next {
				t.Errorf("event %d: %s with open=%d next=%d", i, formatEvent(ev), open, next)
			}
			open, next = ev.Index, next+1
		case gw.EventDelta:
			if ev.Index != open {
				t.Errorf("event %d: %s outside its block (open %d)", i, formatEvent(ev), open)
			}
		case gw.EventBlockStop:
			if ev.Index != open {
				t.Errorf("event %d: %s but open %d", i, formatEvent(ev), open)
			}
			open = -1
		case gw.EventFinish:
			if open >= 0 {
				t.Errorf("finish with block %d open", open)
			}
		}
		if ev.Type != gw.EventStart && i == 0 && ev.Type != gw.EventError {
			t.Errorf("first event is %s", formatEvent(ev))
		}
	}
}

// writeRecorder records each Write call separately.
type writeRecorder struct {
	bytes.Buffer
	writes [][]byte
}

func (w *writeRecorder) Write(p []byte) (int, error) {
	w.writes = append(w.writes, append([]byte(nil), p...))
	return w.Buffer.Write(p)
}

// checkClientStream asserts each Write is one well-formed SSE data event
// holding valid JSON (or [DONE], last).
func checkClientStream(t testing.TB, writes [][]byte) {
	t.Helper()
	if len(writes) == 0 {
		t.Fatal("no output")
	}
	for i, w := range writes {
		s := string(w)
		if !strings.HasPrefix(s, "data: ") || !strings.HasSuffix(s, "\n\n") || strings.Count(s, "\n") != 2 {
			t.Fatalf("write %d is not one data event: %q", i, s)
		}
		payload := strings.TrimSuffix(strings.TrimPrefix(s, "data: "), "\n\n")
		if i == len(writes)-1 {
			if payload != "[DONE]" {
				t.Fatalf("last write %q, want [DONE]", s)
			}
			continue
		}
		if !json.Valid([]byte(payload)) {
			t.Fatalf("write %d is not valid JSON: %q", i, payload)
		}
	}
}

// checkMeterAgrees asserts that the pass-through Meter reads the same
// usage, end and error from the raw stream as the decoder does, so that
// mapped and relayed copies of a stream bill the same.
func checkMeterAgrees(t *testing.T, stream []byte, evs []gw.Event) {
	t.Helper()
	m := NewMeter(false)
	rd := sse.NewReader(bytes.NewReader(stream))
	for rd.Next() {
		ev := rd.Event()
		m.Observe(&ev)
	}
	last := evs[len(evs)-1]
	switch last.Type {
	case gw.EventFinish:
		if m.Err() != nil {
			t.Errorf("meter saw error %v on a finished stream", m.Err())
		}
		if !m.Done() {
			t.Error("meter did not see the end")
		}
		if m.Usage() != *last.Usage {
			t.Errorf("meter usage %+v != decoder usage %+v", m.Usage(), *last.Usage)
		}
	case gw.EventError:
		if m.Err() == nil && m.Done() {
			t.Errorf("decoder failed (%v) but the meter saw a clean end", last.Err)
		}
		if m.Err() != nil && m.Err().Code != last.Err.Code {
			t.Errorf("meter error %v, decoder error %v", m.Err(), last.Err)
		}
	}
}
