package runs

import (
	"net/http"
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		h       map[string]string
		want    gw.RunRef
		wantErr string
	}{
		{"none", nil, gw.RunRef{}, ""},
		{"id only", map[string]string{HeaderRun: "task-1.a:b_c"}, gw.RunRef{ID: "task-1.a:b_c"}, ""},
		{"all", map[string]string{HeaderRun: "child", HeaderParent: "root", HeaderBudget: "0.50", HeaderMaxRequests: "20", HeaderIdle: "600"},
			gw.RunRef{ID: "child", Parent: "root", Caps: gw.RunCaps{Budget: 50_000_000, MaxRequests: 20, Idle: 10 * time.Minute}}, ""},
		{"own parent dropped", map[string]string{HeaderRun: "a", HeaderParent: "a"}, gw.RunRef{ID: "a"}, ""},
		{"128 characters", map[string]string{HeaderRun: strings.Repeat("x", 128)}, gw.RunRef{ID: strings.Repeat("x", 128)}, ""},
		{"129 characters", map[string]string{HeaderRun: strings.Repeat("x", 129)}, gw.RunRef{}, HeaderRun},
		{"space", map[string]string{HeaderRun: "a b"}, gw.RunRef{}, HeaderRun},
		{"slash", map[string]string{HeaderRun: "a/b"}, gw.RunRef{}, HeaderRun},
		{"non-ASCII", map[string]string{HeaderRun: "tâche"}, gw.RunRef{}, HeaderRun},
		{"bad parent", map[string]string{HeaderRun: "a", HeaderParent: "p q"}, gw.RunRef{}, HeaderParent},
		{"budget zero", map[string]string{HeaderRun: "a", HeaderBudget: "0"}, gw.RunRef{}, HeaderBudget},
		{"budget negative", map[string]string{HeaderRun: "a", HeaderBudget: "-1"}, gw.RunRef{}, HeaderBudget},
		{"budget text", map[string]string{HeaderRun: "a", HeaderBudget: "ten"}, gw.RunRef{}, HeaderBudget},
		{"steps zero", map[string]string{HeaderRun: "a", HeaderMaxRequests: "0"}, gw.RunRef{}, HeaderMaxRequests},
		{"steps fraction", map[string]string{HeaderRun: "a", HeaderMaxRequests: "1.5"}, gw.RunRef{}, HeaderMaxRequests},
		{"idle too long", map[string]string{HeaderRun: "a", HeaderIdle: "99999999999"}, gw.RunRef{}, HeaderIdle},
		{"caps without a run", map[string]string{HeaderBudget: "1"}, gw.RunRef{}, HeaderRun},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.h {
				h.Set(k, v)
			}
			got, err := Parse(h)
			if tt.wantErr != "" {
				e := gw.AsError(err)
				if err == nil || e.Code != gw.CodeInvalidRequest || !strings.Contains(e.Message, tt.wantErr) {
					t.Fatalf("err %v, want a 400 naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v %v, want %+v", got, err, tt.want)
			}
		})
	}
}

func TestSetHeaders(t *testing.T) {
	h := http.Header{}
	SetHeaders(h, &gw.Run{Budget: 100_000_000, Spend: 25_000_000, Held: 5_000_000})
	if got := h.Get(HeaderSpend); got != "0.25000000" {
		t.Errorf("spend %q", got)
	}
	if got := h.Get(HeaderRemaining); got != "0.70000000" {
		t.Errorf("remaining %q", got)
	}
	SetHeaders(h, &gw.Run{Spend: 1})
	if h.Get(HeaderRemaining) != "" {
		t.Errorf("remaining without a budget: %q", h.Get(HeaderRemaining))
	}
}
