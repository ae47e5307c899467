package chat

import (
	"context"
	"net/http"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/guard/leak"
	"github.com/gwlabs/gateway/proxy"
)

// The guard's answer side (package guard/leak) reads what the caller
// would receive: the text, reasoning and tool-call arguments of the
// answer, taken from the vendor's bytes on a relayed answer and from the
// canonical parts on a mapped one. A gate holds back, event by event,
// only what could still grow into a leak; nothing is read when the
// request has no protected text.

// answerText appends to dst the answer text a caller reads in doc (an
// answer body or one stream event's data): the unescaped values of the
// text members, and every string inside a tool call's input object. The
// members that echo the request (a response object's instructions and
// tools) are skipped.
func answerText(dst, doc []byte) []byte {
	var key []byte
	for i := 0; i < len(doc); {
		switch doc[i] {
		case '"':
			end := stringEnd(doc, i)
			if end < 0 {
				return dst
			}
			j := skipSpace(doc, end)
			if j < len(doc) && doc[j] == ':' {
				key = doc[i+1 : end-1]
				i = j + 1
				v := skipSpace(doc, i)
				if v < len(doc) && (doc[v] == '{' || doc[v] == '[') {
					switch string(key) {
					case "instructions", "tools", "metadata":
						if e := objectEnd(doc, v); e > 0 {
							i, key = e, nil
						}
					case "input", "args":
						if e := objectEnd(doc, v); e > 0 {
							dst = allStrings(dst, doc[v:e])
							i, key = e, nil
						}
					}
				}
				continue
			}
			if isAnswerKey(key) {
				dst = appendUnescaped(dst, doc[i+1:end-1])
			}
			key, i = nil, end
		case ',', '{', '[', '}', ']':
			key = nil
			i++
		default:
			i++
		}
	}
	return dst
}

func isAnswerKey(k []byte) bool {
	return isTextKey(k) || string(k) == "delta"
}

// allStrings appends the string values (not the member names) of doc.
func allStrings(dst, doc []byte) []byte {
	for i := 0; i < len(doc); i++ {
		if doc[i] != '"' {
			continue
		}
		end := stringEnd(doc, i)
		if end < 0 {
			return dst
		}
		if j := skipSpace(doc, end); j >= len(doc) || doc[j] != ':' {
			dst = appendUnescaped(dst, doc[i+1:end-1])
			dst = append(dst, ' ')
		}
		i = end - 1
	}
	return dst
}

// appendUnescaped appends the JSON string body s unescaped.
func appendUnescaped(dst, s []byte) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			dst = append(dst, c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			dst = append(dst, '\n')
		case 't':
			dst = append(dst, '\t')
		case 'r':
			dst = append(dst, '\r')
		case 'b', 'f':
			dst = append(dst, ' ')
		case 'u':
			if i+4 >= len(s) {
				return dst
			}
			r, err := strconv.ParseUint(string(s[i+1:i+5]), 16, 32)
			if err != nil {
				continue
			}
			i += 4
			ru := rune(r)
			if utf16.IsSurrogate(ru) && i+6 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
				if r2, err := strconv.ParseUint(string(s[i+3:i+7]), 16, 32); err == nil {
					ru = utf16.DecodeRune(ru, rune(r2))
					i += 6
				}
			}
			dst = utf8.AppendRune(dst, ru)
		default:
			dst = append(dst, s[i])
		}
	}
	return dst
}

// gateItem is an event held back: a relayed event's bytes or a mapped
// event, and the answer text offset where its text ends.
type gateItem struct {
	raw []byte
	ev  gw.Event
	end int64
}

// answerGate holds back the events whose text could still be the start
// of a leak, and lets the rest go in order.
type answerGate struct {
	m    *leak.Matcher
	text []byte // scratch
	fed  int64
	rel  int64
	held []gateItem
}

func newAnswerGate(x *proxy.Exchange) *answerGate {
	m := x.AnswerMatcher()
	if m == nil {
		return nil
	}
	return &answerGate{m: m}
}

// feed reads an event's text.
func (g *answerGate) feed(text []byte) *leak.Leak {
	if len(text) == 0 {
		return nil
	}
	g.fed += int64(len(text))
	rel, l := g.m.Write(text)
	g.rel = rel
	return l
}

// raw passes one relayed event: written at once when nothing is held
// and its text cannot start a leak, else kept (copied: the reader reuses
// its buffer) until it can go.
func (g *answerGate) raw(raw, data []byte, write func([]byte) error) (*leak.Leak, error) {
	g.text = answerText(g.text[:0], data)
	if l := g.feed(g.text); l != nil {
		return l, nil
	}
	if len(g.held) == 0 && g.rel >= g.fed {
		return nil, write(raw)
	}
	g.held = append(g.held, gateItem{raw: append([]byte(nil), raw...), end: g.fed})
	return nil, g.release(func(it gateItem) error { return write(it.raw) })
}

// event passes one mapped event the same way.
func (g *answerGate) event(ev gw.Event, write func(gw.Event) error) (*leak.Leak, error) {
	if ev.Type == gw.EventDelta {
		if l := g.feed([]byte(ev.Text)); l != nil {
			return l, nil
		}
	}
	if len(g.held) == 0 && g.rel >= g.fed {
		return nil, write(ev)
	}
	g.held = append(g.held, gateItem{ev: ev, end: g.fed})
	return nil, g.release(func(it gateItem) error { return write(it.ev) })
}

func (g *answerGate) release(write func(gateItem) error) error {
	n := 0
	for ; n < len(g.held) && g.held[n].end <= g.rel; n++ {
		if err := write(g.held[n]); err != nil {
			return err
		}
	}
	g.held = g.held[n:]
	if len(g.held) == 0 {
		g.held = nil
	}
	return nil
}

// close ends the answer: a leak still found, or everything held let go.
func (g *answerGate) close(writeRaw func([]byte) error, writeEv func(gw.Event) error) (*leak.Leak, error) {
	rel, l := g.m.Close()
	if l != nil {
		return l, nil
	}
	g.rel = rel
	return nil, g.release(func(it gateItem) error {
		if it.raw != nil {
			return writeRaw(it.raw)
		}
		return writeEv(it.ev)
	})
}

// checkAnswer reads a whole answer's text; a leak in it is returned.
func checkAnswer(x *proxy.Exchange, texts ...[]byte) *leak.Leak {
	m := x.AnswerMatcher()
	if m == nil {
		return nil
	}
	for _, t := range texts {
		if _, l := m.Write(t); l != nil {
			return l
		}
		// Parts are read apart: a leak does not run across them.
		if _, l := m.Write([]byte{'\n'}); l != nil {
			return l
		}
	}
	_, l := m.Close()
	return l
}

// responseTexts is what a caller reads of a decoded answer.
func responseTexts(resp *gw.Response) [][]byte {
	var out [][]byte
	for _, p := range resp.Content {
		if p.Text != "" {
			out = append(out, []byte(p.Text))
		}
		if len(p.Arguments) > 0 {
			out = append(out, allStrings(nil, p.Arguments))
		}
	}
	return out
}

// blockAnswer answers a whole answer that leaked: the incident, the
// vendor's usage recorded (and charged unless waived), 403 with the
// incident id, nothing of the answer.
func (s *Lifecycle) blockAnswer(w http.ResponseWriter, r *http.Request, x *proxy.Exchange, l *leak.Leak, u gw.Usage) {
	in := x.Inbound()
	e := x.BlockAnswer(r.Context(), l, u)
	charge, _ := s.finish(r.Context(), x, x.LeakOutcome(e, u))
	w.Header().Set(HeaderCharge, charge.CentsString())
	WriteError(w, s.shapeOf(in), in.RequestID, e)
}

// lazyStream starts a stream's headers at its first write, so that an
// answer stopped before any byte left can still be a 403.
type lazyStream struct {
	s       *Lifecycle
	w       http.ResponseWriter
	up      *gw.Upstream
	fw      flushWriter
	started bool
}

func (z *lazyStream) start() {
	if !z.started {
		z.started = true
		z.fw = z.s.startStream(z.w, z.up)
	}
}

func (z *lazyStream) Write(p []byte) (int, error) {
	z.start()
	return z.fw.Write(p)
}

func writeRaw(fw *lazyStream) func([]byte) error {
	return func(b []byte) error {
		_, err := fw.Write(b)
		return err
	}
}

// leakedStream ends a stream whose answer leaked: a 403 when nothing
// was sent yet, else the shape's own error event (with its terminator)
// after the last whole event sent; the vendor's usage so far recorded.
func (s *Lifecycle) leakedStream(ctx context.Context, w http.ResponseWriter, fw *lazyStream, x *proxy.Exchange, l *leak.Leak, u gw.Usage, streamError func(string, *gw.Error) []byte) {
	in := x.Inbound()
	e := x.BlockAnswer(ctx, l, u)
	if !fw.started {
		charge, _ := s.finish(ctx, x, x.LeakOutcome(e, u))
		w.Header().Set(HeaderCharge, charge.CentsString())
		WriteError(w, s.shapeOf(in), in.RequestID, e)
		return
	}
	_, _ = fw.Write(streamError(in.RequestID, e))
	charge, _ := s.finish(ctx, x, x.LeakOutcome(e, u))
	w.Header().Set(HeaderCharge, charge.CentsString())
}
