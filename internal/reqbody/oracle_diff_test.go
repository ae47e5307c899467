package reqbody

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/agentbody"
	"github.com/gwlabs/gateway/internal/rawjson"
)

// sameAsOracle fails t unless Parse reads body as the jsontext-based
// parser it replaced does: the same Body, or the same error (code and
// message).
func sameAsOracle(t *testing.T, shape gw.Shape, body []byte) {
	t.Helper()
	got, gerr := Parse(shape, body)
	want, werr := oracleParse(shape, body)
	if (gerr == nil) != (werr == nil) {
		t.Fatalf("%s %q:\nParse  %+v, %v\noracle %+v, %v", shape, body, got, gerr, want, werr)
	}
	if gerr != nil {
		if gerr.Error() != werr.Error() || gw.ErrorCode(gerr) != gw.ErrorCode(werr) {
			t.Fatalf("%s %q:\nParse  error %q (%s)\noracle error %q (%s)", shape, body, gerr, gw.ErrorCode(gerr), werr, gw.ErrorCode(werr))
		}
		return
	}
	ms, err := rawjson.Members(body)
	if err != nil || !reflect.DeepEqual(got.Top, ms) {
		t.Fatalf("%s %q:\nTop     %+v\nMembers %+v, %v", shape, body, got.Top, ms, err)
	}
	// The messages' elements, offsets into their value, as
	// rawjson.Elements finds them there (nil for messages null or []).
	msgs := rawjson.Value(body, ms, "messages")
	if msgs[0] == '[' {
		els, err := rawjson.Elements(msgs)
		if err != nil || !reflect.DeepEqual(got.Messages, els) {
			t.Fatalf("%s %q:\nMessages %+v\nElements %+v, %v", shape, body, got.Messages, els, err)
		}
	} else if got.Messages != nil {
		t.Fatalf("%s %q: Messages %+v for messages %s", shape, body, got.Messages, msgs)
	}
	got.Top, got.Messages = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s %q:\nParse  %+v\noracle %+v", shape, body, got, want)
	}
}

// oracleSeeds are bodies of every kind: the agents', the tests', and
// nasty ones.
func oracleSeeds() []string {
	var seeds []string
	for _, sh := range []string{"C", "M"} {
		for _, kb := range []int{2, 20} {
			c := agentbody.New(sh, "openai/gpt-6-sol", kb<<10, "s0000000", 2)
			seeds = append(seeds, string(c.Body(0)), string(c.Body(1)))
		}
	}
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	deepObj := `{"model":"a/b","max_tokens":1,"messages":[],"metadata":` + strings.Repeat(`{"a":`, 9998) + "1" + strings.Repeat("}", 9998) + "}"
	deepObj2 := `{"model":"a/b","max_tokens":1,"messages":[],"metadata":` + strings.Repeat(`{"a":`, 9999) + "1" + strings.Repeat("}", 9999) + "}"
	huge := `{"model":"a/b","max_tokens":1,"messages":[{"role":"user","content":"` + strings.Repeat(`abc é\n\"😀\u00e9 `, 5000) + `"}]}`
	var big strings.Builder
	big.WriteString(`{"model":"a/b","max_tokens":1,"messages":[],"metadata":{`)
	for i := range 40 {
		if i > 0 {
			big.WriteByte(',')
		}
		big.WriteString(`"k` + strings.Repeat("x", i) + `":1`)
	}
	bigOK := big.String() + `}}`
	bigDup := big.String() + `,"kxxx":2}}`
	bigDupEsc := big.String() + `,"k\u0078":2}}`
	// the decoder's nesting limit met at the token level (nested tool
	// results) on both sides of it
	for levels := 4996; levels <= 5000; levels++ {
		seeds = append(seeds, `{"model":"a/b","max_tokens":1,"messages":[{"role":"user","content":[`+
			strings.Repeat(`{"type":"tool_result","content":[`, levels)+`{"type":"text","text":"x"}`+strings.Repeat(`]}`, levels)+`]}]}`)
	}
	// big objects the parser reads, with a duplicate
	var many strings.Builder
	for i := range 20 {
		many.WriteString(`"k` + strings.Repeat("y", i) + `":1,`)
	}
	seeds = append(seeds,
		`{"model":"a/b","max_tokens":1,`+many.String()+`"messages":[],"kyyy":2}`,
		`{"model":"a/b","max_tokens":1,`+many.String()+`"messages":[{`+many.String()+`"role":"user","content":"x","k\u0079":2}]}`,
		`{"model":"a/b","max_tokens":1,`+many.String()+`"messages":[{`+many.String()+`"role":"user","content":"x"}]}`,
	)
	seeds = append(seeds,
		`{"model":"anthropic/x","max_tokens":5,"system":"be brief","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}`,
		`{"model":"a/b","max_tokens":1,"messages":[
			{"role":"user","content":[
				{"type":"text","text":"question"},
				{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}},
				{"type":"document","title":"Doc title","context":"doc context","source":{"type":"text","media_type":"text/plain","data":"doc body"}},
				{"type":"document","source":{"type":"content","content":[{"type":"text","text":"nested doc"}]}},
				{"type":"document","source":{"content":[{"type":"text","text":"nested doc"}],"type":"content"}},
				{"type":"document","source":{"type":"base64","media_type":"text/plain","data":"cGxhaW4gdGV4dCBkb2M="}},
				{"type":"search_result","title":"result title","source":"https://example.com","content":[{"type":"text","text":"result text"}]},
				{"content":[{"type":"text","text":"late"}],"input":{"a":1},"source":{"type":"text","data":"x"},"type":"tool_result"}
			]},
			{"role":"assistant","content":[
				{"type":"thinking","thinking":"secret reasoning","signature":"sig"},
				{"type":"tool_use","id":"t1","name":"lookup","input":{"q":"weather"}},
				{"input": {"q" : [1, 2.5e-3, -0, true, false, null]} ,"type":"tool_use"}
			]},
			{"role":"system","content":"per turn"}
		]}`,
		`{"model":"openai/x","stream":true,"max_tokens":5,"max_completion_tokens":9,"models":["a/b","c/d"],"messages":[
			{"role":"system","content":[{"type":"text","text":"sys part"}]},
			{"role":"assistant","content":null,"refusal":"I can't","tool_calls":[{"id":"c1","type":"function","function":{"name":"get","arguments":"{\"city\":\"Oslo\"}"}}]},
			{"role":"assistant","content":[{"type":"refusal","refusal":"no"},{"type":"text","text":"ok"}],"function_call":{"name":"g","arguments":"{}"}},
			{"role":"tool","tool_call_id":"c1","content":[{"type":"text","text":"12C"}]}
		],"tools":[{"type":"function","function":{"name":"read","description":"Reads \u0041 file.","parameters":{"type":"object","properties":{"path":{"type":"string","descr\u0069ption":"The path"},"description":{"type":"string"}}}}}],
		"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"properties":{"ID":{}}}}},"tool_choice":"auto"}`,
		`{"model":"a/b","max_tokens":1,"messages":[{"role":"user","content":"x","content":"y"}]}`,
		`{"model":"a/b","max_tokens":1,"messages":[{"role":"user","content":"x","cont\u0065nt":"y"}]}`,
		`{"mod\u0065l":"a/b","max_tokens":1,"messages":[]}`,
		`{"model":"a/b","max_tokens":1,"messages":[],"metadata":{"a":{"b":[{"c":1,"c":2}]}}}`,
		`{"model":"a/b","max_tokens":1,"messages":[{"role":"user","content":"\ud83d\ude00 \ud800 x"}]}`,
		`{"model":"a/b","max_tokens":1,"messages":[{"role":"user","content":"\udc00\ud800"}]}`,
		`{"model":"a/b","max_tokens":1,"messages":[{"role":"user","content":"\uD83D\uDE00\u00E9\/\b\f\r\t"}]}`,
		"{\"model\":\"a/b\",\"max_tokens\":1,\"messages\":[{\"role\":\"user\",\"content\":\"\xff\"}]}",
		"{\"model\":\"a/b\",\"max_tokens\":1,\"messages\":[{\"r\xc3ole\":\"user\"}]}",
		"{\"model\":\"a/b\",\"max_tokens\":1,\"metadata\":{\"\xed\xa0\x80\":1},\"messages\":[]}",
		"{\"model\":\"a/b\",\"max_tokens\":1,\"messages\":[{\"role\":\"user\",\"content\":\"tab\there\"}]}",
		`{"model":"a/b","max_tokens":1,"messages":[],"n":[0,-0,1.5,-1e10,1E+2,2e-3,01]}`,
		`{"model":"a/b","max_tokens":-1,"messages":[]}`,
		`{"model":"a/b","max_tokens":1e2,"messages":[]}`,
		`{"model":"a/b","max_tokens":1x,"messages":[]}`,
		`{"model":"a/b","max_tokens":-1x,"messages":[]}`,
		`{"model":"a/b","max_tokens":9223372036854775807,"messages":[]} `,
		" \t\r\n{\"model\" : \"a/b\" , \"max_tokens\" :1 ,\"messages\" : [ ] } \n",
		`{"model":"a/b","max_tokens":1,"messages":[]} {}`,
		`{"model":"a/b","max_tokens":1,"messages":[]}x`,
		`{"model":"a/b","max_tokens":1,"messages":[],}`,
		`{"model":"a/b","max_tokens":1,"messages":[,]}`,
		`{"model":"a/b","max_tokens":1,"messages":[{},,]}`,
		`{"model":"a/b","max_tokens":1,"messages":x}`,
		`{"model":"a/b","max_tokens":1,"messages":}`,
		`{"model":"a/b","max_tokens":1,"messages":[x]}`,
		`{"model":"a/b","max_tokens":1,"messages":[{"role":"user","content":[{"type":"text","text":"a"}}]}`,
		`{"model":5,"messages":[]}`,
		`{"model":"`+strings.Repeat("m", 300)+`"x,"messages":[]}`,
		`{"models":["a/b",""],"model":"a/b","messages":[]}`,
		`{"models":null,"model":"a/b","messages":[]}`,
		`{"stream":tru,"model":"a/b","messages":[]}`,
		`{"stream":"yes","model":"a/b","messages":[]}`,
		`{"Model":"a/b","messages":[]}`,
		`{"model":"a/b","messages":[{"Role" 1}]}`,
		`{"model":"a/b","messages":[{"role" 1}]}`,
		`{"model":"a/b","messages":[],"tools":5x}`,
		`{"model":"a/b","messages":[],"tools":[{"name":"t","Input_Schema":{}}]}`,
		`"just a string"`,
		`[1,2`,
		`   `,
		`nul`,
		`{"a":"\u00zz"}`,
		`{"a":"\x"}`,
		deep, deepObj, deepObj2, huge, bigOK, bigDup, bigDupEsc,
	)
	return seeds
}

func TestParseMatchesOracle(t *testing.T) {
	for _, s := range oracleSeeds() {
		for _, shape := range []gw.Shape{gw.ShapeC, gw.ShapeM} {
			sameAsOracle(t, shape, []byte(s))
			sameAsOracle(t, shape, withEnvelope(s))
			// every prefix of the short ones: truncations at every state
			if len(s) < 2000 {
				for i := range len(s) {
					sameAsOracle(t, shape, []byte(s[:i]))
				}
			}
		}
	}
}

func FuzzParseMatchesOracle(f *testing.F) {
	for _, s := range oracleSeeds() {
		if len(s) < 8<<10 { // the big ones are TestParseMatchesOracle's
			f.Add([]byte(s), true)
			f.Add([]byte(s), false)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte, m bool) {
		shape := gw.ShapeC
		if m {
			shape = gw.ShapeM
		}
		sameAsOracle(t, shape, body)
	})
}

// TestTextMatchesOracle: strings of every escape (one-letter ones, \u
// ones, surrogate pairs and lone surrogates), of multi-byte text and
// of invalid bytes, as message text, system text and keys, read as the
// decoder reads them.
func TestTextMatchesOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	pieces := []string{"a", "code ", `\n`, `\t`, `\"`, `\\`, `\/`, `\b`, `\f`, `\r`, `\u00e9`, `\u003c`, `\u00E9`, `\ud83d\ude00`, `\uD83D\uDE00`, `\ud800`, `\udc00x`, `\ud800\u0041`, `\x`, `\u12`, "é", "😀", "\u2028", `\\u`, `\\n`, "\xff", "\xed\xa0\x80", "\x01", "\x7f", "01234567"}
	for range 5000 {
		var b strings.Builder
		for range r.IntN(16) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		s := b.String()
		for _, body := range []string{
			`{"model":"a/b","max_tokens":1,"messages":[{"role":"user","content":"` + s + `"}]}`,
			`{"model":"a/b","max_tokens":1,"system":[{"type":"text","text":"` + s + `"}],"messages":[]}`,
			`{"model":"a/b","max_tokens":1,"messages":[],"metadata":{"` + s + `":1,"x":2}}`,
			`{"model":"a/b","max_tokens":1,"messages":[],"tools":[{"name":"t","description":"` + s + `","input_schema":{"description":"` + s + `"}}]}`,
		} {
			sameAsOracle(t, gw.ShapeM, []byte(body))
		}
	}
}
