// Package clientcorpus holds the requests the official clients send
// through the gateway (Claude Code, Codex CLI, Gemini CLI, the OpenAI
// Agents SDK, the Vercel AI SDK, the Node SDKs of OpenAI, Anthropic and
// Google), recorded from the client-conformance suite by
// scripts/record-client-corpus, and reads their text as the gateway's
// shapes read it. They are benign by construction: a check that flags
// one of them blocks a real client's own scaffolding. The corpus test
// runs every check over every request.
package clientcorpus

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/shape"
	anthropicshape "github.com/gwlabs/gateway/shape/anthropic"
	geminishape "github.com/gwlabs/gateway/shape/gemini"
	openaishape "github.com/gwlabs/gateway/shape/openai"
	"github.com/gwlabs/gateway/shape/responses"
)

// Request is one recorded request: the client that sent it (its file's
// name), the conformance cell, the URL path and the body as sent.
type Request struct {
	Client string          `json:"-"`
	Cell   string          `json:"cell"`
	Path   string          `json:"path"`
	Body   json.RawMessage `json:"body"`
}

// Name identifies the request in a test's message.
func (r Request) Name() string { return r.Client + " " + r.Cell + " " + r.Path }

// Load reads every *.jsonl file of dir, one request a line; the file's
// name is the client's.
func Load(dir string) ([]Request, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []Request
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		client := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 64<<20)
		for n := 1; sc.Scan(); n++ {
			if len(bytes.TrimSpace(sc.Bytes())) == 0 {
				continue
			}
			var r Request
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", f, n, err)
			}
			r.Client = client
			out = append(out, r)
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
	}
	return out, nil
}

// Shape is the shape that reads a request sent to path: M for
// /v1/messages and its count_tokens, C for /v1/chat/completions, R for
// /v1/responses, G for a model's method (/v1beta/models/...:method, or
// /v1/models/... as @google/genai sends it); nil for another path.
func Shape(path string) shape.Shape {
	switch {
	case path == "/v1/messages" || path == "/v1/messages/count_tokens":
		return anthropicshape.Shape{}
	case path == "/v1/chat/completions":
		return openaishape.Shape{}
	case path == "/v1/responses" || path == "/v1/responses/input_tokens":
		return responses.Shape{}
	case (strings.HasPrefix(path, "/v1beta/models/") || strings.HasPrefix(path, "/v1/models/")) && strings.Contains(path, ":"):
		return geminishape.Shape{}
	}
	return nil
}

// Texts is the text the gateway reads out of r for the guard.
func Texts(r Request) ([]gw.Text, error) {
	s := Shape(r.Path)
	if s == nil {
		return nil, fmt.Errorf("%s: no shape reads %s", r.Name(), r.Path)
	}
	path := r.Path
	if strings.HasSuffix(path, ":countTokens") {
		// the gateway guards a count as the content it counts
		path = strings.TrimSuffix(path, ":countTokens") + ":generateContent"
	}
	req, err := s.Parse(path, r.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.Name(), err)
	}
	return req.Text, nil
}
