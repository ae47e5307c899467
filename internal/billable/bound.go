package billable

import "bytes"

// Prompt bound margins, as the gateway's dispute of reported usage
// applies them (see Marks.PromptBound): the gateway's own count is one
// token per OwnBytesPerToken bytes, the bound half as much again;
// frameMargin is the prompt a vendor adds to any request (the framing
// of messages, a default system prompt), toolMargin what it adds to one
// that declares tools (the vendors' tool-use system prompts: a few
// hundred tokens); imageMargin the most one image or audio part may
// bill beyond its bytes.
const (
	OwnBytesPerToken = 3
	frameMargin      = 64
	toolMargin       = 1024
	imageMargin      = 4096
)

// boundImageMarks and boundContextMarks are matched as written, as
// ExternalInput matches (a JSON key, never text inside a string, where
// its quotes would be escaped).
var (
	boundImageMarks = [][]byte{
		[]byte(`"image_url"`), []byte(`"input_image"`), []byte(`"type":"image"`), []byte(`"type": "image"`),
		[]byte(`"inlineData"`), []byte(`"inline_data"`), []byte(`"input_audio"`),
	}
	// boundToolMarks declare tools, for which a vendor adds its
	// tool-use system prompt.
	boundToolMarks = [][]byte{[]byte(`"tools"`), []byte(`"functionDeclarations"`), []byte(`"function_declarations"`)}
	// boundContextMarks make a vendor bill prompt the body does not
	// hold and the gateway cannot size: documents, a vendor-kept cache,
	// conversation or prompt template, a response continued without the
	// gateway knowing its size, server tools and plugins that fetch
	// content.
	boundContextMarks = [][]byte{
		[]byte(`"document"`), []byte(`"input_file"`), []byte(`"file_data"`), []byte(`"file"`),
		[]byte(`"cachedContent"`), []byte(`"cached_content"`), []byte(`"conversation"`), []byte(`"prompt":{`), []byte(`"prompt": {`),
		[]byte(`"previous_response_id"`), []byte(`"container"`), []byte(`"mcp_servers"`), []byte(`"plugins"`), []byte(`"thread"`),
		[]byte(`"web_search`), []byte(`"file_search`), []byte(`"code_execution`), []byte(`"code_interpreter`),
		[]byte(`"googleSearch`), []byte(`"google_search`), []byte(`"urlContext`), []byte(`"url_context`),
	}
)

// boundMark is one mark of the prompt bound's single pass: image marks
// are counted (image >= 0, their index), the others end the search.
type boundMark struct {
	mark     []byte
	image    int
	external bool // one of externalMarks
	tool     bool // one of boundToolMarks
}

// boundMarks indexes every mark (external input, context, image) by the
// byte after its opening quote: all of them open with one.
var boundMarks = func() (t [256][]boundMark) {
	add := func(m []byte, image int, external bool) {
		if len(m) < 2 || m[0] != '"' {
			panic("billable: bound mark " + string(m) + " does not open with a quote and a byte")
		}
		t[m[1]] = append(t[m[1]], boundMark{mark: m, image: image, external: external})
	}
	for _, m := range externalMarks {
		add(m, -1, true)
	}
	for _, m := range boundContextMarks {
		add(m, -1, false)
	}
	for i, m := range boundImageMarks {
		add(m, i, false)
	}
	for _, m := range boundToolMarks {
		t[m[1]] = append(t[m[1]], boundMark{mark: m, image: -1, tool: true})
	}
	return t
}()

// PromptBound is the most prompt tokens the gateway accepts that a
// vendor bills for body (the vendor's request) with extraBytes of
// server-side context it knows of (a kept conversation): 1.5 times the
// gateway's own count of both (one token per OwnBytesPerToken bytes,
// rounded up), plus frameMargin, toolMargin when the body declares
// tools, and imageMargin per image or audio part. 0 means unbounded: the body points at input whose size the
// gateway does not know (a context mark, or ExternalInput), or the
// answer used hosted tools (hostedCalls) whose results the vendor bills
// as prompt.
//
// It reads body once: every mark opens with a quote, so each quote is
// checked against the marks that continue with the byte after it. Image
// parts are counted as bytes.Count counts each mark (occurrences that do
// not overlap, from the left).
func PromptBound(body []byte, extraBytes int, hostedCalls bool) int64 {
	if len(body) == 0 || hostedCalls {
		return 0
	}
	return ScanMarks(body).PromptBound(extraBytes, false)
}

// Marks is what ExternalInput and PromptBound read of one body, found in
// one pass (ScanMarks): a request whose hold asks ExternalInput of its
// vendor body need not read it again for its prompt bound.
type Marks struct {
	// External is ExternalInput(body).
	External bool
	// Unbounded says the body holds an external-input or context mark.
	Unbounded bool
	// Images is the count of image and audio parts PromptBound adds a
	// margin for (while no mark leaves the prompt unbounded).
	Images int64
	// Tools says the body declares tools.
	Tools bool
	// n is the body's length.
	n int
}

// ScanMarks reads body's marks once, as PromptBound does.
func ScanMarks(body []byte) Marks {
	m := Marks{n: len(body)}
	var next [8]int // per image mark: where its next occurrence may start
	if len(boundImageMarks) > len(next) {
		panic("billable: too many image marks")
	}
	for p := 0; ; p++ {
		j := bytes.IndexByte(body[p:], '"')
		if j < 0 || p+j+1 >= len(body) {
			break
		}
		p += j
		for _, bm := range boundMarks[body[p+1]] {
			if !bytes.HasPrefix(body[p:], bm.mark) {
				continue
			}
			switch {
			case bm.tool:
				m.Tools = true
			case bm.external:
				m.External, m.Unbounded = true, true
				return m
			case bm.image < 0:
				// Unbounded: what is left to know is whether input is
				// external, at p or past it.
				m.Unbounded = true
				m.External = ExternalInput(body[p:])
				return m
			case p >= next[bm.image]:
				m.Images++
				next[bm.image] = p + len(bm.mark)
			}
		}
	}
	return m
}

// PromptBound is PromptBound of the body m was read from.
func (m Marks) PromptBound(extraBytes int, hostedCalls bool) int64 {
	if m.n == 0 || hostedCalls || m.Unbounded {
		return 0
	}
	own := (int64(m.n) + int64(max(extraBytes, 0)) + OwnBytesPerToken - 1) / OwnBytesPerToken
	n := own + (own+1)/2 + frameMargin + m.Images*imageMargin
	if m.Tools {
		n += toolMargin
	}
	return n
}
