package google

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	gw "github.com/gwlabs/gateway"
	"golang.org/x/tools/txtar"
)

// The golden files in testdata are txtar archives that a reader can open
// side by side:
//
//	testdata/request/*.txtar   request.json (a gw.Request, Go field names)
//	                           -> gemini.json (the body sent), dropped (one
//	                           field a line), or error
//	testdata/response/*.txtar  gemini.json (an answer) -> response.json, or error
//	testdata/stream/*.txtar    stream.sse (or stream.crlf.sse: LF becomes CRLF
//	                           before replay) -> events (one event a line)
//
// go test ./provider/google -run Golden -update rewrites the outputs.
var update = flag.Bool("update", false, "rewrite the golden outputs in testdata")

func goldenFiles(t testing.TB, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no golden files in testdata/%s", dir)
	}
	return files
}

func readArchive(t testing.TB, file string) *txtar.Archive {
	t.Helper()
	a, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func section(a *txtar.Archive, name string) ([]byte, bool) {
	for _, f := range a.Files {
		if f.Name == name {
			return f.Data, true
		}
	}
	return nil, false
}

// setOutputs replaces every section but the inputs with outs (in order,
// empty ones left out) and writes the archive back.
func setOutputs(t *testing.T, file string, a *txtar.Archive, inputs []string, outs [][2]string) {
	t.Helper()
	keep := a.Files[:0]
	for _, f := range a.Files {
		for _, in := range inputs {
			if f.Name == in {
				keep = append(keep, f)
			}
		}
	}
	a.Files = keep
	for _, o := range outs {
		if o[1] != "" {
			a.Files = append(a.Files, txtar.File{Name: o[0], Data: []byte(o[1])})
		}
	}
	if err := os.WriteFile(file, txtar.Format(a), 0o644); err != nil {
		t.Fatal(err)
	}
}

func indentJSON(b []byte) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "", "  "); err != nil {
		return string(b) + "\n"
	}
	return buf.String() + "\n"
}

func errorText(err error) string {
	var ge *gw.Error
	if !errors.As(err, &ge) {
		return fmt.Sprintf("not a *gw.Error: %v\n", err)
	}
	s := fmt.Sprintf("%s: %s\n", ge.Code, ge.Message)
	if ge.RetryAfter > 0 {
		s += fmt.Sprintf("retry after %s\n", ge.RetryAfter)
	}
	return s
}

func TestGoldenRequests(t *testing.T) {
	for _, file := range goldenFiles(t, "request") {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			a := readArchive(t, file)
			in, ok := section(a, "request.json")
			if !ok {
				t.Fatal("no request.json")
			}
			var r gw.Request
			if err := json.Unmarshal(in, &r); err != nil {
				t.Fatalf("request.json: %v", err)
			}
			body, err := EncodeRequest(&r)
			var gotBody, gotErr, gotDropped string
			if err != nil {
				gotErr = errorText(err)
			} else {
				if !json.Valid(body) {
					t.Fatalf("invalid JSON: %s", body)
				}
				var compact bytes.Buffer
				_ = json.Compact(&compact, body)
				if !bytes.Equal(compact.Bytes(), body) {
					t.Errorf("output is not compact JSON")
				}
				gotBody = indentJSON(body)
			}
			if len(r.Dropped) > 0 {
				gotDropped = strings.Join(r.Dropped, "\n") + "\n"
			}
			if *update {
				setOutputs(t, file, a, []string{"request.json"}, [][2]string{{"gemini.json", gotBody}, {"dropped", gotDropped}, {"error", gotErr}})
				return
			}
			for _, c := range [][3]string{{"gemini.json", gotBody}, {"dropped", gotDropped}, {"error", gotErr}} {
				want, _ := section(a, c[0])
				if string(want) != c[1] {
					t.Errorf("%s:\n got: %s\nwant: %s", c[0], c[1], want)
				}
			}
		})
	}
}

func TestGoldenResponses(t *testing.T) {
	for _, file := range goldenFiles(t, "response") {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			a := readArchive(t, file)
			in, ok := section(a, "gemini.json")
			if !ok {
				t.Fatal("no gemini.json")
			}
			var gotResp, gotErr string
			resp, err := DecodeResponse(in)
			if err != nil {
				gotErr = errorText(err)
			} else {
				b, err := json.Marshal(viewResponse(resp))
				if err != nil {
					t.Fatal(err)
				}
				gotResp = indentJSON(b)
			}
			if *update {
				setOutputs(t, file, a, []string{"gemini.json"}, [][2]string{{"response.json", gotResp}, {"error", gotErr}})
				return
			}
			for _, c := range [][2]string{{"response.json", gotResp}, {"error", gotErr}} {
				want, _ := section(a, c[0])
				if string(want) != c[1] {
					t.Errorf("%s:\n got: %s\nwant: %s", c[0], c[1], want)
				}
			}
		})
	}
}

// streamInput returns a golden stream's bytes.
func streamInput(t testing.TB, a *txtar.Archive) []byte {
	t.Helper()
	if in, ok := section(a, "stream.sse"); ok {
		return in
	}
	if in, ok := section(a, "stream.crlf.sse"); ok {
		return bytes.ReplaceAll(in, []byte("\n"), []byte("\r\n"))
	}
	t.Fatal("no stream.sse or stream.crlf.sse")
	return nil
}

// replay decodes a stream read through r and renders its events, checking
// the stream contract on the way.
func replay(t testing.TB, r io.Reader) string {
	t.Helper()
	d := NewStreamDecoder(io.NopCloser(r))
	defer d.Close()
	var b strings.Builder
	var events []gw.Event
	for {
		ev, err := d.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("Recv: %v", err)
		}
		events = append(events, ev)
		line, err := json.Marshal(viewEvent(ev))
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
		if len(events) > 100000 {
			t.Fatal("stream does not end")
		}
	}
	if err := checkContract(events); err != nil {
		t.Errorf("stream contract: %v\n%s", err, b.String())
	}
	return b.String()
}

func TestGoldenStreams(t *testing.T) {
	for _, file := range goldenFiles(t, "stream") {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			a := readArchive(t, file)
			in := streamInput(t, a)
			got := replay(t, bytes.NewReader(in))
			if *update {
				setOutputs(t, file, a, []string{"stream.sse", "stream.crlf.sse"}, [][2]string{{"events", got}})
				return
			}
			want, _ := section(a, "events")
			if got != string(want) {
				t.Fatalf("events:\n got:\n%s\nwant:\n%s", got, want)
			}
			if g := replay(t, iotest.OneByteReader(bytes.NewReader(in))); g != got {
				t.Errorf("one byte at a time:\n got:\n%s\nwant:\n%s", g, got)
			}
			for i := 1; i < len(in); i++ {
				r := io.MultiReader(iotest.HalfReader(bytes.NewReader(in[:i])), bytes.NewReader(in[i:]))
				if g := replay(t, r); g != got {
					t.Fatalf("split at byte %d:\n got:\n%s\nwant:\n%s", i, g, got)
				}
			}
		})
	}
}

// checkContract verifies the canonical stream contract: Start first, then
// per block BlockStart, Delta*, BlockStop with indices from 0, then
// Finish; or Error at any point, after which nothing follows.
func checkContract(events []gw.Event) error {
	if len(events) == 0 {
		return errors.New("no events")
	}
	open, next := -1, 0
	for i, ev := range events {
		last := i == len(events)-1
		switch ev.Type {
		case gw.EventStart:
			if i != 0 {
				return fmt.Errorf("event %d: Start not first", i)
			}
		case gw.EventBlockStart:
			if i == 0 || open >= 0 || ev.Index != next || ev.Part == nil {
				return fmt.Errorf("event %d: bad BlockStart (open %d, index %d, want %d)", i, open, ev.Index, next)
			}
			open = ev.Index
			next++
		case gw.EventDelta:
			if open < 0 || ev.Index != open {
				return fmt.Errorf("event %d: Delta outside its block", i)
			}
		case gw.EventBlockStop:
			if open < 0 || ev.Index != open {
				return fmt.Errorf("event %d: BlockStop of a block not open", i)
			}
			open = -1
		case gw.EventFinish:
			if !last || open >= 0 || ev.Usage == nil {
				return fmt.Errorf("event %d: Finish not last, with a block open, or without usage", i)
			}
		case gw.EventError:
			if !last || ev.Err == nil {
				return fmt.Errorf("event %d: Error not last or without error", i)
			}
		default:
			return fmt.Errorf("event %d: unknown type %d", i, ev.Type)
		}
	}
	switch events[len(events)-1].Type {
	case gw.EventFinish, gw.EventError:
	default:
		return errors.New("stream ends without Finish or Error")
	}
	if events[0].Type != gw.EventStart && events[0].Type != gw.EventError {
		return errors.New("stream does not begin with Start")
	}
	return nil
}

// Views: compact renderings for the golden files.

type partView struct {
	Type       gw.PartType     `json:"type"`
	Text       string          `json:"text,omitempty"`
	MediaType  string          `json:"media_type,omitempty"`
	Data       string          `json:"data,omitempty"`
	URL        string          `json:"url,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	ToolName   string          `json:"tool_name,omitempty"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
	Signature  string          `json:"signature,omitempty"`
}

func viewPart(p *gw.Part) *partView {
	if p == nil {
		return nil
	}
	return &partView{Type: p.Type, Text: p.Text, MediaType: p.MediaType, Data: p.Data, URL: p.URL,
		ToolCallID: p.ToolCallID, ToolName: p.ToolName, Arguments: p.Arguments, Signature: p.Signature}
}

type usageView struct {
	Input     int64 `json:"input"`
	CacheRead int64 `json:"cache_read"`
	Output    int64 `json:"output"`
	Reasoning int64 `json:"reasoning"`
	Reported  bool  `json:"reported"`
}

func viewUsage(u *gw.Usage) *usageView {
	if u == nil {
		return nil
	}
	if u.CacheWrite5mTokens != 0 || u.CacheWrite1hTokens != 0 || u.OptimizerTokens != 0 || u.HasReportedCost {
		panic("usage bucket the google decoder never sets")
	}
	return &usageView{Input: u.InputTokens, CacheRead: u.CacheReadTokens, Output: u.OutputTokens, Reasoning: u.ReasoningTokens, Reported: u.Reported}
}

type responseView struct {
	ID           string        `json:"id"`
	Model        string        `json:"model"`
	Content      []*partView   `json:"content"`
	StopReason   gw.StopReason `json:"stop_reason"`
	StopSequence string        `json:"stop_sequence,omitempty"`
	Usage        *usageView    `json:"usage"`
}

func viewResponse(r *gw.Response) responseView {
	v := responseView{ID: r.ID, Model: r.Model, StopReason: r.StopReason, StopSequence: r.StopSequence, Usage: viewUsage(&r.Usage), Content: []*partView{}}
	for i := range r.Content {
		v.Content = append(v.Content, viewPart(&r.Content[i]))
	}
	return v
}

type eventView struct {
	Type       string        `json:"type"`
	Index      *int          `json:"index,omitempty"`
	Model      string        `json:"model,omitempty"`
	ID         string        `json:"id,omitempty"`
	Part       *partView     `json:"part,omitempty"`
	Text       string        `json:"text,omitempty"`
	Signature  string        `json:"signature,omitempty"`
	StopReason gw.StopReason `json:"stop_reason,omitempty"`
	Usage      *usageView    `json:"usage,omitempty"`
	Err        string        `json:"error,omitempty"`
}

var eventNames = map[gw.EventType]string{
	gw.EventStart: "start", gw.EventBlockStart: "block_start", gw.EventDelta: "delta",
	gw.EventBlockStop: "block_stop", gw.EventFinish: "finish", gw.EventError: "error",
}

func viewEvent(ev gw.Event) eventView {
	v := eventView{Type: eventNames[ev.Type], Model: ev.Model, ID: ev.ID, Part: viewPart(ev.Part), Text: ev.Text,
		Signature: ev.Signature, StopReason: ev.StopReason, Usage: viewUsage(ev.Usage)}
	switch ev.Type {
	case gw.EventBlockStart, gw.EventDelta, gw.EventBlockStop:
		i := ev.Index
		v.Index = &i
	}
	if ev.Err != nil {
		v.Err = string(ev.Err.Code) + ": " + ev.Err.Message
	}
	return v
}
