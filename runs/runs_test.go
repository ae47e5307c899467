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
		want    Spec
		ok      bool
		wantErr string
	}{
		{"none", nil, Spec{}, false, ""},
		{"id only", map[string]string{HeaderRun: "task-1.a:b_c"}, Spec{ID: "task-1.a:b_c"}, true, ""},
		{"all", map[string]string{HeaderRun: "child", HeaderParent: "root", HeaderBudget: "0.50", HeaderMaxRequests: "20", HeaderIdle: "600"},
			Spec{ID: "child", Parent: "root", Caps: gw.RunCaps{Budget: 50_000_000, MaxRequests: 20, Idle: 10 * time.Minute}}, true, ""},
		{"own parent dropped", map[string]string{HeaderRun: "a", HeaderParent: "a"}, Spec{ID: "a"}, true, ""},
		{"128 characters", map[string]string{HeaderRun: strings.Repeat("x", 128)}, Spec{ID: strings.Repeat("x", 128)}, true, ""},
		{"129 characters", map[string]string{HeaderRun: strings.Repeat("x", 129)}, Spec{}, false, HeaderRun},
		{"space", map[string]string{HeaderRun: "a b"}, Spec{}, false, HeaderRun},
		{"slash", map[string]string{HeaderRun: "a/b"}, Spec{}, false, HeaderRun},
		{"non-ASCII", map[string]string{HeaderRun: "tâche"}, Spec{}, false, HeaderRun},
		{"bad parent", map[string]string{HeaderRun: "a", HeaderParent: "p q"}, Spec{}, false, HeaderParent},
		{"budget zero", map[string]string{HeaderRun: "a", HeaderBudget: "0"}, Spec{}, false, HeaderBudget},
		{"budget negative", map[string]string{HeaderRun: "a", HeaderBudget: "-1"}, Spec{}, false, HeaderBudget},
		{"budget text", map[string]string{HeaderRun: "a", HeaderBudget: "ten"}, Spec{}, false, HeaderBudget},
		{"steps zero", map[string]string{HeaderRun: "a", HeaderMaxRequests: "0"}, Spec{}, false, HeaderMaxRequests},
		{"steps fraction", map[string]string{HeaderRun: "a", HeaderMaxRequests: "1.5"}, Spec{}, false, HeaderMaxRequests},
		{"idle too long", map[string]string{HeaderRun: "a", HeaderIdle: "99999999999"}, Spec{}, false, HeaderIdle},
		{"caps without a run", map[string]string{HeaderBudget: "1"}, Spec{}, false, HeaderRun},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.h {
				h.Set(k, v)
			}
			got, ok, err := Parse(h)
			if tt.wantErr != "" {
				e := gw.AsError(err)
				if err == nil || e.Code != gw.CodeInvalidRequest || !strings.Contains(e.Message, tt.wantErr) {
					t.Fatalf("err %v, want a 400 naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil || ok != tt.ok || got != tt.want {
				t.Fatalf("got %+v %v %v, want %+v %v", got, ok, err, tt.want, tt.ok)
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
