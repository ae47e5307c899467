package fakevendor

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// family is a wire shape: C (chat completions), M (messages), G (Gemini).
type family int

const (
	famChat family = iota
	famMessages
	famGemini
)

func familyOf(vendor string) family {
	switch vendor {
	case "anthropic":
		return famMessages
	case "google":
		return famGemini
	}
	return famChat
}

// toolDecl is a tool the request declared.
type toolDecl struct {
	name   string
	schema json.RawMessage
}

// call is one decoded request, whatever its wire shape.
type call struct {
	vendor        string
	model         string
	stream        bool
	includeUsage  bool // C: stream_options.include_usage
	obfuscate     bool // OpenAI: obfuscation padding on chunks
	body          []byte
	userText      string   // text of the last user message with text
	toolResults   []string // set when the last message carries tool results
	tools         []toolDecl
	stopSequences []string
	dirs          directives
	cached        bool   // the prefix cache reported reads or writes
	reply         string // the reply model's text, when hasReply
	hasReply      bool
	seed          [32]byte // hash of vendor, model and body: ids derive from it
	thinking      bool     // DeepSeek: thinking mode (on unless the request turns it off)
	// The body's service_tier and speed, read once (every stream event
	// names them).
	knobs *bodyKnobs
}

type bodyKnobs struct {
	ServiceTier string `json:"service_tier"`
	Speed       string `json:"speed"`
}

// knobsOf reads c.body's service_tier and speed on first use.
func (c *call) knobsOf() *bodyKnobs {
	if c.knobs == nil {
		c.knobs = new(bodyKnobs)
		// A member of the wrong type is left empty and the other read,
		// as when each was read alone; a body that is not JSON has none.
		var te *json.UnmarshalTypeError
		if err := json.Unmarshal(c.body, c.knobs); err != nil && !errors.As(err, &te) {
			*c.knobs = bodyKnobs{}
		}
	}
	return c.knobs
}

// namedCall is a [fake:call=NAME:ARGS] directive: call the declared tool
// NAME with ARGS (a JSON object; empty: arguments from its schema).
type namedCall struct {
	name string
	args string
}

// directives are the [fake:...] instructions of a call.
type directives struct {
	raw []string // every directive as written, in order
	// reportTwice and reportOmit bend the reports (report.go): this
	// request counted twice, or left out.
	reportTwice, reportOmit bool
	text                    string
	hasText                 bool
	tools                   int
	calls                   []namedCall // [fake:call=NAME:ARGS], in order
	reasoning               bool
	cache                   bool
	cacheRead               int // -1: default
	cache5m                 int
	cache1h                 int
	stop                    string
	status                  int
	retry                   int
	failFirst               int
	failStatus              int
	slow                    time.Duration
	delay                   time.Duration
	hang                    bool
	breakAt                 int // -1: off
	errorAt                 int // -1: off
	malformed               bool
	chunks                  int
	cost                    string
	retryMs                 int    // -1: off
	quota                   string // Google's QuotaFailure quotaId on a 429 ("none": no QuotaFailure)
	reset                   bool   // close the connection with a reset, answering nothing
	silent                  bool   // send 200 headers, then nothing
	on                      string // the faults apply only to this vendor, model or vendor/model
	searches                int    // hosted web searches the answer reports ([fake:searches=N])
	fetches                 int    // hosted web fetches ([fake:fetches=N], Anthropic)
	container               bool   // the answer ran code in a container ([fake:container], Anthropic)
	tier                    string // the service tier the answer says served it ([fake:tier=NAME])
	leak                    string // answer with the system prompt in this form ([fake:leak=FORM], leak.go)
	leakIn                  string // where: "" the text, "reasoning", "tool" (a call of the first declared tool)
}

// clearFaults drops the failures d scripts (for a call that on does not
// name).
func (d *directives) clearFaults() {
	d.hang, d.slow, d.failFirst, d.status, d.reset, d.silent = false, 0, 0, 0, false, false
	d.breakAt, d.errorAt = -1, -1
}

var directiveRE = regexp.MustCompile(`\[fake:([a-z0-9-]+)(?:=([^\]]*))?\]`)

// parseDirectives reads every [fake:NAME] and [fake:NAME=VALUE] in text.
func parseDirectives(text string) (directives, error) {
	d := directives{cacheRead: -1, cache5m: -1, cache1h: -1, retry: 2, failStatus: 503, breakAt: -1, errorAt: -1, retryMs: -1}
	for _, m := range directiveRE.FindAllStringSubmatch(text, -1) {
		name, val, hasVal := m[1], m[2], strings.Contains(m[0], "=")
		d.raw = append(d.raw, m[0])
		var err error
		num := func(min int) int {
			n, e := strconv.Atoi(val)
			if e != nil || n < min {
				err = fmt.Errorf("directive %s: want an integer >= %d, got %q", m[0], min, val)
			}
			return n
		}
		word := func(what string) string {
			if val == "" {
				err = fmt.Errorf("directive %s: want %s", m[0], what)
			}
			return val
		}
		dur := func() time.Duration {
			t, e := time.ParseDuration(val)
			if e != nil || t < 0 {
				err = fmt.Errorf("directive %s: want a duration like 250ms, got %q", m[0], val)
			}
			return t
		}
		switch name {
		case "text":
			d.text, d.hasText = val, true
		case "leak":
			d.leak = val
		case "leak-in":
			d.leakIn = val
		case "tool":
			d.tools = 1
			if hasVal {
				d.tools = num(1)
			}
		case "tools":
			d.tools = num(1)
		case "call":
			name, args, _ := strings.Cut(val, ":")
			if name == "" {
				err = fmt.Errorf("directive %s: want NAME or NAME:{json object}", m[0])
				break
			}
			if args != "" {
				var obj map[string]any
				if e := json.Unmarshal([]byte(args), &obj); e != nil || obj == nil {
					err = fmt.Errorf("directive %s: the arguments must be a JSON object", m[0])
					break
				}
				b, _ := json.Marshal(obj)
				args = string(b)
			}
			d.calls = append(d.calls, namedCall{name: name, args: args})
		case "reasoning":
			d.reasoning = true
		case "cache":
			d.cache = true
			if hasVal {
				parts := strings.Split(val, "/")
				if len(parts) > 3 {
					err = fmt.Errorf("directive %s: want READ[/WRITE5M[/WRITE1H]]", m[0])
					break
				}
				nums := []*int{&d.cacheRead, &d.cache5m, &d.cache1h}
				for i, p := range parts {
					n, e := strconv.Atoi(p)
					if e != nil || n < 0 {
						err = fmt.Errorf("directive %s: want READ[/WRITE5M[/WRITE1H]] of integers >= 0", m[0])
						break
					}
					*nums[i] = n
				}
			}
		case "stop":
			d.stop = word("a finish reason")
		case "status":
			d.status = num(400)
		case "retry":
			d.retry = num(0)
		case "retry-ms":
			d.retryMs = num(0)
		case "quota":
			d.quota = word(`a Google quota id, or "none"`)
		case "reset":
			d.reset = true
		case "silent":
			d.silent = true
		case "on":
			d.on = word("a vendor, model or vendor/model")
		case "searches":
			d.searches = num(0)
		case "fetches":
			d.fetches = num(0)
		case "container":
			d.container = true
		case "tier":
			d.tier = word("a service tier name")
		case "id":
		case "fail-first":
			d.failFirst = num(1)
		case "fail-status":
			d.failStatus = num(400)
		case "slow":
			d.slow = dur()
		case "delay":
			d.delay = dur()
		case "hang":
			d.hang = true
		case "break":
			d.breakAt = num(0)
		case "error-after":
			d.errorAt = num(0)
		case "malformed":
			d.malformed = true
		case "chunks":
			d.chunks = num(1)
		case "report-twice":
			d.reportTwice = true
		case "report-omit":
			d.reportOmit = true
		case "cost":
			if _, e := strconv.ParseFloat(val, 64); e != nil || !json.Valid([]byte(val)) {
				err = fmt.Errorf("directive %s: want a decimal number", m[0])
			}
			d.cost = val
		default:
			err = fmt.Errorf("unknown directive %s", m[0])
		}
		if err != nil {
			return d, err
		}
	}
	return d, nil
}

// Tokens is the fake's token count for a text of n bytes: ceil(n/4).
func Tokens(n int) int { return (n + 3) / 4 }

// PromptTokens is the input token count the fake reports for a request
// body: ceil(len(body)/4), at least 1.
func PromptTokens(body []byte) int { return max(1, Tokens(len(body))) }

// toolCall is one planned tool call.
type toolCall struct {
	id     string
	name   string
	args   string   // JSON object
	pieces []string // args split for streaming
}

// reply is the planned answer, before any vendor encoding.
type reply struct {
	id           string
	reasoning    string
	reasonPieces []string
	text         string
	textPieces   []string
	calls        []toolCall
	stop         string // vendor-native finish reason
	stopSequence string // Anthropic stop_sequence echo
	signature    string // thinking / thought signature
	usage        counts
}

// counts are the token counts of a reply.
type counts struct {
	prompt    int // all input, cached included
	cacheRead int
	cache5m   int // cache writes, 5-minute TTL (Anthropic) / all writes elsewhere
	cache1h   int
	text      int
	tool      int
	reasoning int
}

func (u counts) output() int     { return u.text + u.tool + u.reasoning }
func (u counts) cacheWrite() int { return u.cache5m + u.cache1h }

// DefaultText returns the reply text the fake sends when no directive or
// tool result says otherwise.
func DefaultText(vendor, model string) string {
	return "Hello from " + vendor + " " + model + ". This is a deterministic fake reply."
}

// ReasoningText returns the reasoning text the fake sends for [fake:reasoning].
func ReasoningText(model string) string {
	return "The user wants a short reply from " + model + "; answer plainly."
}

// plan builds the reply for c.
func plan(c *call) *reply {
	r := &reply{}
	d := c.dirs
	switch {
	case d.leak != "" && d.leakIn == "tool" && len(c.tools) > 0:
		b, _ := json.Marshal(map[string]string{"q": Leaked(systemPrompt(c.body), d.leak)})
		args := string(b)
		r.calls = append(r.calls, toolCall{id: toolID(c, 0), name: c.tools[0].name, args: args, pieces: splitN(args, 12)})
	case d.leak != "" && d.leakIn == "reasoning":
		r.text = "Done."
		d.reasoning = true
	case d.leak != "":
		r.text = Leaked(systemPrompt(c.body), d.leak)
	case d.hasText:
		r.text = d.text
	case c.toolResults != nil:
		r.text = "Tool said: " + strings.Join(c.toolResults, " | ")
	case len(d.calls) > 0 && len(c.tools) > 0:
		for _, nc := range d.calls {
			i := declaredTool(c.tools, nc.name)
			if i < 0 {
				// A model can only call a declared tool.
				continue
			}
			args := nc.args
			if args == "" {
				args = argsFor(c.tools[i].schema)
			}
			r.calls = append(r.calls, toolCall{id: toolID(c, len(r.calls)), name: c.tools[i].name, args: args, pieces: splitN(args, 3)})
		}
		if len(r.calls) == 0 {
			r.text = DefaultText(c.vendor, c.model)
		}
	case d.tools > 0 && len(c.tools) > 0:
		for i := range d.tools {
			t := c.tools[i%len(c.tools)]
			args := argsFor(t.schema)
			r.calls = append(r.calls, toolCall{id: toolID(c, i), name: t.name, args: args, pieces: splitN(args, 3)})
		}
	case c.hasReply:
		r.text = c.reply
	default:
		r.text = DefaultText(c.vendor, c.model)
	}
	if d.chunks > 0 {
		r.textPieces = splitN(r.text, d.chunks)
	} else {
		r.textPieces = splitWords(r.text)
	}
	if d.reasoning || c.thinking {
		// DeepSeek reasons on every answer in thinking mode, its default.
		r.reasoning = ReasoningText(c.model)
		if d.leak != "" && d.leakIn == "reasoning" {
			r.reasoning = Leaked(systemPrompt(c.body), d.leak)
		}
		r.reasonPieces = splitWords(r.reasoning)
		r.signature = "sig_" + idFrom(c.seed, "signature", 40)
	}
	u := counts{prompt: PromptTokens(c.body), text: Tokens(len(r.text)), reasoning: Tokens(len(r.reasoning))}
	for _, tc := range r.calls {
		u.tool += Tokens(len(tc.name) + len(tc.args))
	}
	if d.cache {
		u.cacheRead, u.cache5m, u.cache1h = u.prompt/2, u.prompt/4, 0
		if d.cacheRead >= 0 {
			u.cacheRead = d.cacheRead
		}
		if d.cache5m >= 0 {
			u.cache5m = d.cache5m
		}
		if d.cache1h >= 0 {
			u.cache1h = d.cache1h
		}
		// Clamp so cached parts never exceed the prompt.
		u.cacheRead = min(u.cacheRead, u.prompt)
		u.cache5m = min(u.cache5m, u.prompt-u.cacheRead)
		u.cache1h = min(u.cache1h, u.prompt-u.cacheRead-u.cache5m)
	}
	r.usage = u
	r.stop, r.stopSequence = stopReason(c, len(r.calls) > 0)
	r.id = responseID(c)
	return r
}

// stopReason maps the stop directive (or the default) to the vendor's own
// finish reason.
func stopReason(c *call, tools bool) (reason, sequence string) {
	fam := familyOf(c.vendor)
	g := c.dirs.stop
	if g == "" {
		switch {
		case fam == famMessages && tools:
			return "tool_use", ""
		case fam == famMessages:
			return "end_turn", ""
		case fam == famGemini:
			return "STOP", ""
		case tools:
			return "tool_calls", ""
		case c.vendor == "together":
			// Together's models end a natural stop with "eos".
			return "eos", ""
		}
		return "stop", ""
	}
	switch fam {
	case famMessages:
		switch g {
		case "length", "max_tokens":
			return "max_tokens", ""
		case "content_filter", "refusal":
			return "refusal", ""
		case "stop", "end_turn", "eos":
			return "end_turn", ""
		case "tool_calls", "tool_use":
			return "tool_use", ""
		case "stop_sequence":
			seq := "STOP"
			if len(c.stopSequences) > 0 {
				seq = c.stopSequences[0]
			}
			return "stop_sequence", seq
		}
	case famGemini:
		switch g {
		case "length", "max_tokens":
			return "MAX_TOKENS", ""
		case "content_filter", "refusal":
			return "SAFETY", ""
		case "stop", "end_turn", "stop_sequence", "eos", "tool_calls", "tool_use":
			return "STOP", ""
		}
	default:
		switch g {
		case "length", "max_tokens":
			return "length", ""
		case "content_filter", "refusal":
			return "content_filter", ""
		case "stop", "end_turn", "stop_sequence":
			return "stop", ""
		case "tool_calls", "tool_use":
			return "tool_calls", ""
		case "eos":
			if c.vendor == "together" {
				return "eos", ""
			}
			return "stop", ""
		}
	}
	return g, ""
}

// servedTier is the service tier the answer names, as OpenAI-dialect
// vendors answer: [fake:tier=NAME] when given, else the tier the request
// asked for when it is one the vendor serves apart ("priority", "flex"),
// else def (the vendor's standard tier name).
func (c *call) servedTier(def string) string {
	if c.dirs.tier != "" {
		return c.dirs.tier
	}
	if t := c.knobsOf().ServiceTier; t == "priority" || t == "flex" {
		return t
	}
	return def
}

// fastMode reports an Anthropic request for fast mode (speed "fast").
func (c *call) fastMode() bool {
	return c.knobsOf().Speed == "fast"
}
