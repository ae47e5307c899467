package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gwlabs/gateway/fakevendor"
)

// TestCodexRequest runs "codex exec" (an exec_command round trip) through
// the gateway's native openai/ route to an in-process fake and checks,
// on what Codex sent, the request the Responses route is built for (what
// Codex 0.169 sends: stream, store false, encrypted reasoning included,
// reasoning summaries, prompt_cache_key, client_metadata, no
// instructions, developer messages, function tools, a namespace group,
// the hosted web_search, its session headers), and that the fake got the
// same request with only the model's prefix removed (and the optimizer's
// directive in instructions).
func TestCodexRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("the client-conformance suite is not short")
	}
	codex := codexBinary()
	if codex == "" {
		missing(t, "the Codex binary is not installed")
	}
	fake, err := fakevendor.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	gwURL, key, logs := startGateway(t, ctx, "GATEWAY_OPENAI_BASE_URL="+fake.BaseURL("openai"), "GATEWAY_OPENAI_API_KEY="+fake.APIKey("openai"))

	rec := &recorder{}
	target, _ := url.Parse(gwURL)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.FlushInterval = -1
	proxy := httptest.NewServer(rec.wrap(rp))
	defer proxy.Close()

	// The model catalog entry run.mjs writes too: Codex's tools for a
	// model it has no metadata of, plus its freeform apply_patch. (For a
	// model it knows, such as gpt-6-sol, Codex sends that model's own
	// settings instead.)
	home := t.TempDir()
	catalog := `{"models":[{"slug":"openai/gpt-6-sol","display_name":"gpt-6-sol","description":"gateway route","default_reasoning_level":"low",` +
		`"supported_reasoning_levels":[{"effort":"low","description":"Low"}],"shell_type":"unified_exec","visibility":"list","supported_in_api":true,` +
		`"priority":1,"base_instructions":"You are a coding agent.","supports_reasoning_summaries":true,"default_reasoning_summary":"auto",` +
		`"support_verbosity":false,"default_verbosity":null,"apply_patch_tool_type":"freeform","truncation_policy":{"mode":"tokens","limit":10000},` +
		`"supports_parallel_tool_calls":true,"context_window":200000,"effective_context_window_percent":95,"experimental_supported_tools":[],` +
		`"input_modalities":["text"],"supports_search_tool":false}]}`
	if err := os.WriteFile(filepath.Join(home, "models.json"), []byte(catalog), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := "model = \"openai/gpt-6-sol\"\nmodel_provider = \"gw\"\nmodel_catalog_json = \"" + filepath.Join(home, "models.json") + "\"\n" +
		"[model_providers.gw]\nname = \"gw\"\nbase_url = \"" + proxy.URL + "/v1\"\n" +
		"env_key = \"GW_KEY\"\nwire_api = \"responses\"\nrequest_max_retries = 0\nstream_max_retries = 0\n"
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, codex, "exec", "--skip-git-repo-check", "--sandbox", "workspace-write",
		`Run it. [fake:reasoning] [fake:call=exec_command:{"cmd":"echo codex-request-marker"}]`)
	cmd.Dir = home
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "CODEX_HOME=" + home, "GW_KEY=" + key}
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("Tool said: ")) {
		t.Fatalf("codex exec: %v\n%s\ngateway log:\n%s", err, out, logs.String())
	}

	sent := rec.requests()
	if len(sent) != 2 {
		t.Fatalf("Codex made %d requests, want 2 (the call, then its output)", len(sent))
	}
	for i, r := range sent {
		if r.method != http.MethodPost || r.path != "/v1/responses" {
			t.Fatalf("request %d: %s %s", i, r.method, r.path)
		}
		for _, h := range []string{"Originator", "Session-Id", "Thread-Id", "X-Client-Request-Id"} {
			if r.header.Get(h) == "" {
				t.Errorf("request %d has no %s header", i, h)
			}
		}
		if !slices.ContainsFunc(slices.Collect(maps.Keys(r.header)), func(k string) bool { return strings.HasPrefix(k, "X-Codex-") }) {
			t.Errorf("request %d has no x-codex-* header", i)
		}
		var b map[string]json.RawMessage
		if err := json.Unmarshal(r.body, &b); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{
			"stream": `true`, "store": `false`, "include": `["reasoning.encrypted_content"]`,
			"tool_choice": `"auto"`, "parallel_tool_calls": `true`,
		}
		for k, v := range want {
			if string(b[k]) != v {
				t.Errorf("request %d: %s = %s, want %s", i, k, b[k], v)
			}
		}
		var reasoning struct{ Summary string }
		_ = json.Unmarshal(b["reasoning"], &reasoning)
		var meta map[string]any
		_ = json.Unmarshal(b["client_metadata"], &meta)
		if reasoning.Summary != "auto" || len(b["prompt_cache_key"]) < 3 || len(meta) == 0 || b["instructions"] != nil {
			t.Errorf("request %d: reasoning %s, prompt_cache_key %s, client_metadata %s, instructions %s", i, b["reasoning"], b["prompt_cache_key"], b["client_metadata"], b["instructions"])
		}
		var tools []struct {
			Type, Name        string
			Tools             []struct{ Type, Name string }
			ExternalWebAccess *bool `json:"external_web_access"`
		}
		_ = json.Unmarshal(b["tools"], &tools)
		var exec, namespace, search, patch bool
		for _, tl := range tools {
			switch {
			case tl.Type == "function" && tl.Name == "exec_command":
				exec = true
			case tl.Type == "namespace" && len(tl.Tools) > 0:
				namespace = true
			case tl.Type == "web_search" && tl.ExternalWebAccess != nil && !*tl.ExternalWebAccess:
				search = true
			case tl.Type == "custom" && tl.Name == "apply_patch":
				patch = true
			}
		}
		var items []struct {
			Type, Role       string
			EncryptedContent string `json:"encrypted_content"`
		}
		_ = json.Unmarshal(b["input"], &items)
		var types []string
		developer := false
		for _, it := range items {
			types = append(types, it.Type)
			developer = developer || it.Role == "developer"
			if it.Type == "reasoning" && it.EncryptedContent == "" {
				t.Errorf("request %d: a reasoning item without encrypted_content", i)
			}
		}
		if !exec || !namespace || !search || !patch || !developer {
			t.Errorf("request %d: exec_command %v, namespace group %v, web_search %v, custom apply_patch %v, developer messages %v", i, exec, namespace, search, patch, developer)
		}
		if i == 1 && !slices.Equal(types[len(types)-3:], []string{"reasoning", "function_call", "function_call_output"}) {
			t.Errorf("second request ends with %v, want the reasoning, the call and its output", types)
		}
	}

	// The native route: the fake got Codex's requests with the model's
	// prefix removed; only instructions (the optimizer's directive) may
	// be added. The hosted web_search goes through: the rate card prices
	// it on gpt-6-sol (per call, billed from the answer's web_search_call
	// items), so it is neither refused nor left out.
	var got [][]byte
	for _, r := range fake.Requests() {
		// (The optimizer's calibration of the model, a "Hello" of at
		// most 16 output tokens, is not one of Codex's.)
		if r.Path == "/v1/responses" && !bytes.Contains(r.Body, []byte(`"max_output_tokens":16`)) {
			got = append(got, r.Body)
		}
	}
	if len(got) != len(sent) {
		t.Fatalf("the fake got %d Responses calls, Codex sent %d", len(got), len(sent))
	}
	for i := range got {
		var a, b map[string]any
		if json.Unmarshal(sent[i].body, &a) != nil || json.Unmarshal(got[i], &b) != nil {
			t.Fatal("not JSON")
		}
		if b["model"] != "gpt-6-sol" {
			t.Errorf("request %d reached the fake with model %v", i, b["model"])
		}
		for _, m := range []map[string]any{a, b} {
			delete(m, "model")
			delete(m, "instructions")
		}
		search := false
		if tools, ok := b["tools"].([]any); ok {
			for _, tl := range tools {
				if m, ok := tl.(map[string]any); ok && m["type"] == "web_search" {
					search = true
				}
			}
		}
		if !search {
			t.Errorf("request %d: the priced web_search tool did not reach the vendor", i)
		}
		if !reflect.DeepEqual(a, b) {
			for k := range a {
				if !reflect.DeepEqual(a[k], b[k]) {
					t.Errorf("request %d: member %q changed on the way to the vendor", i, k)
				}
			}
			for k := range b {
				if _, ok := a[k]; !ok {
					t.Errorf("request %d: member %q added on the way to the vendor", i, k)
				}
			}
		}
	}
}

// recorder keeps the requests passing through it.
type recorder struct {
	mu   sync.Mutex
	reqs []recorded
}

type recorded struct {
	method, path string
	header       http.Header
	body         []byte
}

func (rc *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.reqs = append(rc.reqs, recorded{r.Method, r.URL.Path, r.Header.Clone(), body})
		rc.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	})
}

func (rc *recorder) requests() []recorded {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.reqs)
}
