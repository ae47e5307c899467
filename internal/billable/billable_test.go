package billable

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
)

// Issue 29 item 6: every feature the audit saw pass through unpriced is
// found, with the field that asks for it; tokens-only features are not.
func TestFind(t *testing.T) {
	tests := []struct {
		name  string
		shape gw.Shape
		body  string
		want  []Use
	}{
		{"priority tier", gw.ShapeC, `{"model":"m","service_tier":"priority","messages":[]}`, []Use{{PriorityTier, `service_tier "priority"`}}},
		{"flex tier", gw.ShapeR, `{"model":"m","service_tier":"flex","input":"x"}`, []Use{{FlexTier, `service_tier "flex"`}}},
		{"default tier is tokens", gw.ShapeC, `{"service_tier":"default"}`, nil},
		{"auto tier is tokens", gw.ShapeM, `{"service_tier":"auto"}`, nil},
		{"fast mode", gw.ShapeM, `{"model":"m","speed":"fast","max_tokens":5}`, []Use{{FastMode, `speed "fast"`}}},
		{"web search max_uses 50", gw.ShapeM, `{"tools":[{"name":"f","input_schema":{}},{"type":"web_search_20250305","name":"web_search","max_uses":50}]}`,
			[]Use{{WebSearch, `tools[1].type "web_search_20250305"`}}},
		{"web fetch and code execution", gw.ShapeM, `{"tools":[{"type":"web_fetch_20250910","name":"web_fetch"},{"type":"code_execution_20250825","name":"code_execution"}]}`,
			[]Use{{WebFetch, `tools[0].type "web_fetch_20250910"`}, {CodeExecution, `tools[1].type "code_execution_20250825"`}}},
		{"mcp servers", gw.ShapeM, `{"mcp_servers":[{"type":"url","url":"https://x"}]}`, []Use{{MCP, "mcp_servers"}}},
		{"no mcp servers", gw.ShapeM, `{"mcp_servers":[]}`, nil},
		{"client tools are tokens", gw.ShapeM, `{"tools":[{"type":"computer_20250124","name":"computer"},{"type":"bash_20250124","name":"bash"},{"type":"custom","name":"x"}]}`, nil},
		{"web_search_options", gw.ShapeC, `{"web_search_options":{}}`, []Use{{WebSearch, "web_search_options"}}},
		{"chat functions are tokens", gw.ShapeC, `{"tools":[{"type":"function","function":{"name":"f"}}]}`, nil},
		{"responses hosted tools", gw.ShapeR, `{"tools":[{"type":"web_search_preview"},{"type":"file_search"},{"type":"code_interpreter"},{"type":"image_generation"},{"type":"mcp","server_url":"x"},{"type":"computer_use_preview"},{"type":"function","name":"f"}]}`,
			[]Use{{WebSearch, `tools[0].type "web_search_preview"`}, {FileSearch, `tools[1].type "file_search"`}, {CodeExecution, `tools[2].type "code_interpreter"`},
				{ImageGen, `tools[3].type "image_generation"`}, {MCP, `tools[4].type "mcp"`}, {ComputerUse, `tools[5].type "computer_use_preview"`}}},
		{"gemini grounding", gw.ShapeG, `{"contents":[],"tools":[{"functionDeclarations":[]},{"googleSearch":{}},{"code_execution":{}},{"url_context":{}}]}`,
			[]Use{{Grounding, "tools[1].googleSearch"}, {CodeExecution, "tools[2].code_execution"}, {Grounding, "tools[3].url_context"}}},
		{"malformed body", gw.ShapeC, `{"tools":`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Find(tt.shape, []byte(tt.body)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Find = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRefusal(t *testing.T) {
	uses := Find(gw.ShapeM, []byte(`{"speed":"fast","tools":[{"type":"web_search_20250305","max_uses":50}]}`))
	err := Refusal(uses, nil, nil, "anthropic", "claude-opus-5")
	if gw.ErrorCode(err) != gw.CodeInvalidRequest || !strings.Contains(err.Error(), `fast_mode (speed "fast")`) || !strings.Contains(err.Error(), "anthropic/claude-opus-5") {
		t.Errorf("refusal: %v", err)
	}
	err = Refusal(uses, nil, map[string]bool{FastMode: true}, "anthropic", "claude-opus-5")
	if err == nil || !strings.Contains(err.Error(), "web_search") {
		t.Errorf("fast mode allowed, web search not: %v", err)
	}
	if err := Refusal(uses, nil, map[string]bool{FastMode: true, WebSearch: true}, "anthropic", "m"); err != nil {
		t.Errorf("both allowed: %v", err)
	}
	// Priced by the card for the model: not refused; what the card
	// cannot price still is.
	priced := func(u string) bool { return u == WebSearch || u == FastMode }
	if err := Refusal(uses, priced, nil, "anthropic", "claude-opus-5"); err != nil {
		t.Errorf("both priced: %v", err)
	}
	if err := Refusal(uses, func(u string) bool { return u == WebSearch }, nil, "anthropic", "claude-sonnet-5-5"); err == nil || !strings.Contains(err.Error(), "fast_mode") {
		t.Errorf("fast mode unpriced: %v", err)
	}
}

// Issue 29 item 2: the hold covers each hosted tool at its limit.
func TestPlan(t *testing.T) {
	tests := []struct {
		name  string
		shape gw.Shape
		body  string
		want  Plan
	}{
		{"max_uses 50", gw.ShapeM, `{"speed":"fast","tools":[{"type":"web_search_20250305","name":"web_search","max_uses":50},{"type":"web_fetch_20250910","name":"web_fetch"}]}`,
			Plan{Hold: gw.Hosted{Fast: true, WebSearches: 50, WebFetches: DefaultCalls}, Bound: gw.Hosted{WebSearches: 50, WebFetches: -1}}},
		{"dynamic filtering makes code free", gw.ShapeM, `{"tools":[{"type":"web_search_20260209","name":"web_search","max_uses":3},{"type":"code_execution_20250825","name":"code_execution"}]}`,
			Plan{Hold: gw.Hosted{WebSearches: 3, CodeContainers: 1, CodeSeconds: 3600}, FreeCode: true, Bound: gw.Hosted{WebSearches: 3}}},
		{"responses max_tool_calls", gw.ShapeR, `{"service_tier":"priority","max_tool_calls":7,"tools":[{"type":"web_search"},{"type":"file_search"}]}`,
			Plan{Hold: gw.Hosted{ServiceTier: "priority", WebSearches: 7, FileSearches: 7}, Bound: gw.Hosted{WebSearches: 7, FileSearches: 7}}},
		{"chat web_search_options", gw.ShapeC, `{"service_tier":"flex","web_search_options":{}}`,
			Plan{Hold: gw.Hosted{ServiceTier: "flex", WebSearches: 1}, SearchPerRequest: true}},
		{"gemini grounding", gw.ShapeG, `{"tools":[{"googleSearch":{}}]}`, Plan{Hold: gw.Hosted{GroundingQueries: DefaultCalls}}},
		{"nothing billable", gw.ShapeM, `{"max_tokens":5}`, Plan{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := []byte(tt.body)
			if got := PlanFor(tt.shape, b, Find(tt.shape, b)); got != tt.want {
				t.Errorf("PlanFor = %+v, want %+v", got, tt.want)
			}
		})
	}
	p := Plan{SearchPerRequest: true, FreeCode: true}
	if got := p.Bill(gw.Hosted{CodeContainers: 1}); got != (gw.Hosted{WebSearches: 1}) {
		t.Errorf("Bill = %+v", got)
	}
	// Issue 29 item 5: a count above the request's max_uses is a vendor
	// error, billed at the limit; without a limit it stands.
	b := []byte(`{"tools":[{"type":"web_search_20250305","name":"web_search","max_uses":5},{"type":"web_fetch_20250910","name":"web_fetch"}]}`)
	lp := PlanFor(gw.ShapeM, b, Find(gw.ShapeM, b))
	if got := lp.Bill(gw.Hosted{WebSearches: 1_000_000_000_000, WebFetches: 40}); got.WebSearches != 5 || got.WebFetches != 40 {
		t.Errorf("Bill of 1e12 searches with max_uses 5 = %+v", got)
	}
}

func FuzzFind(f *testing.F) {
	f.Add([]byte(`{"tools":[{"type":"web_search_20250305"}],"service_tier":"priority"}`))
	f.Add([]byte(`{"tools":[{"googleSearch":{}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, s := range []gw.Shape{gw.ShapeM, gw.ShapeC, gw.ShapeR, gw.ShapeG} {
			for _, u := range Find(s, b) {
				if u.Unit == "" || u.Field == "" {
					t.Fatalf("empty use %+v", u)
				}
			}
		}
	})
}

// Issue 29 item 2: input the vendor fetches itself is found in every
// shape; text that merely mentions it is not.
func TestExternalInput(t *testing.T) {
	for body, want := range map[string]bool{
		`{"messages":[{"role":"user","content":[{"type":"document","source":{"type":"url","url":"https://x/a.pdf"}}]}]}`:   true,
		`{"messages":[{"role":"user","content":[{"type":"image","source": {"type": "url", "url": "https://x/a.png"}}]}]}`:  true,
		`{"messages":[{"role":"user","content":[{"type":"document","source":{"type":"file","file_id":"file_1"}}]}]}`:       true,
		`{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/a.png"}}]}]}`:            true,
		`{"input":[{"role":"user","content":[{"type":"input_file","file_url":"https://x/a.pdf"}]}]}`:                       true,
		`{"contents":[{"parts":[{"fileData":{"fileUri":"gs://b/a.pdf","mimeType":"application/pdf"}}]}]}`:                  true,
		`{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]}]}`: false,
		`{"messages":[{"role":"user","content":"what is \"file_id\"? and \"type\":\"url\""}]}`:                             false,
	} {
		if got := ExternalInput([]byte(body)); got != want {
			t.Errorf("ExternalInput(%s) = %v, want %v", body, got, want)
		}
	}
}

func TestStripTools(t *testing.T) {
	body := []byte(`{"model":"gpt-6-sol","tools":[{"type":"function","name":"exec_command"},{"type":"web_search","external_web_access":false},{"type":"namespace","name":"ns","tools":[]},{"type":"file_search"}],"stream":true}`)
	keepFiles := func(u string) bool { return u == FileSearch }
	none := func(string) bool { return false }
	out, stripped := StripTools(gw.ShapeR, body, keepFiles)
	want := `{"model":"gpt-6-sol","tools":[{"type":"function","name":"exec_command"},{"type":"namespace","name":"ns","tools":[]},{"type":"file_search"}],"stream":true}`
	if string(out) != want || len(stripped) != 1 || stripped[0] != "web_search" {
		t.Fatalf("StripTools = %s, %v\nwant %s, [web_search]", out, stripped, want)
	}
	if uses := Find(gw.ShapeR, out); Refusal(uses, keepFiles, nil, "openai", "m") != nil {
		t.Errorf("a stripped body is still refused: %v", uses)
	}
	// Nothing to take out: the same bytes.
	same := []byte(`{"tools":[{"type":"function","name":"f"}]}`)
	if out, st := StripTools(gw.ShapeR, same, none); string(out) != string(same) || st != nil {
		t.Errorf("StripTools without hosted tools = %s, %v", out, st)
	}
	// Every tool hosted: an empty array remains.
	if out, st := StripTools(gw.ShapeR, []byte(`{"tools":[{"type":"web_search"}]}`), none); string(out) != `{"tools":[]}` || len(st) != 1 {
		t.Errorf("StripTools of the only tool = %s, %v", out, st)
	}
}

// ExternalInput's anchored search finds exactly what a search for each
// mark finds, on bodies stitched from pieces of the marks.
func TestExternalInputMatchesEachMark(t *testing.T) {
	each := func(body []byte) bool {
		for _, m := range externalMarks {
			if bytes.Contains(body, m) {
				return true
			}
		}
		return false
	}
	var pieces [][]byte
	for _, m := range externalMarks {
		for i := 0; i < len(m); i += 3 {
			pieces = append(pieces, m[i:min(i+5, len(m))])
		}
		pieces = append(pieces, m)
	}
	pieces = append(pieces, []byte(`\"`), []byte(`{"a":`), []byte(` `))
	r := rand.New(rand.NewPCG(7, 9))
	found := 0
	for range 50000 {
		var body []byte
		for range 1 + r.IntN(6) {
			p := pieces[r.IntN(len(pieces))]
			if r.IntN(4) > 0 && len(p) > 6 && !bytes.Contains(p, []byte(`http`)) {
				p = p[:len(p)-1] // a near miss
			}
			body = append(body, p...)
		}
		want := each(body)
		if want {
			found++
		}
		if got := ExternalInput(body); got != want {
			t.Fatalf("ExternalInput(%s) = %v, each mark searched: %v", body, got, want)
		}
	}
	if found == 0 || found == 50000 {
		t.Fatalf("%d of 50000 bodies held a mark: the test reaches one side only", found)
	}
}
