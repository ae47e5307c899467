package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/internal/clitest"
)

func TestCLIMoneyAndDurationText(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
	}{{"30d", 30 * 24 * time.Hour}, {"2w", 14 * 24 * time.Hour}, {"1d12h", 36 * time.Hour}, {"90m", 90 * time.Minute}, {"0", 0}} {
		if got, err := parseDuration(c.in); err != nil || got != c.want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "d", "30", "3x", "-1d"} {
		if _, err := parseDuration(bad); err == nil {
			t.Errorf("parseDuration(%q) accepted", bad)
		}
	}
	for in, want := range map[string]string{"-0.00000035": "-$0.00000035", "12.50000000": "$12.50000000"} {
		if got := dollars(in); got != want {
			t.Errorf("dollars(%q) = %q, want %q", in, got, want)
		}
	}
}

// config check shows every setting's effective value and its default
// (never "-"); an unknown key in the file gets a suggestion.
func TestConfigCheckShowsDefaults(t *testing.T) {
	r := runCLI(t, "", "config", "check", "--json")
	var got struct {
		Settings []app.Setting `json:"settings"`
	}
	if err := clitest.OneJSON(r.Stdout, &got); err != nil {
		t.Fatal(err)
	}
	for _, s := range got.Settings {
		if s.Default == "" || s.Default == "?" || s.Effective == "" {
			t.Errorf("%s: default %q, effective %q", s.Name, s.Default, s.Effective)
		}
		if s.Name == "GATEWAY_RPM" && (s.Effective != "600" || s.Default != "600") {
			t.Errorf("GATEWAY_RPM: %+v", s)
		}
	}
	if r := runCLI(t, "", "config", "check"); strings.Contains(r.Stdout, "  -  ") {
		t.Errorf("a default shown as -:\n%s", r.Stdout)
	}
	bad := filepath.Join(t.TempDir(), "bad.toml")
	if err := os.WriteFile(bad, []byte("openai_api_ky = \"x\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, "", "--config", bad, "config", "check"); !strings.Contains(r.Stderr, `did you mean "openai_api_key"?`) {
		t.Errorf("no suggestion: %+v", r)
	}
}

func TestEnvTypos(t *testing.T) {
	got := app.EnvTypos([]string{"GATEWAY_RMP=5", "GATEWAY_RPM=5", "GATEWAY_KEY=gwk_x", "GATEWAY_GAURD=off", "HOME=/root", "GATEWAY_ADMIN_URL=http://x"})
	want := []string{"GATEWAY_GAURD is not a setting; did you mean GATEWAY_GUARD?", "GATEWAY_RMP is not a setting; did you mean GATEWAY_RPM?"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// parseDuration never panics; what it accepts is not negative unless
// Go's own syntax said so, and whole days and weeks come out exact.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"30d", "2w", "1d12h", "90m", "0", "1.5d", "-1d", "d", "99999999999999w", "3x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseDuration(s)
		if err != nil {
			return
		}
		if d < 0 && !strings.Contains(s, "-") {
			t.Fatalf("parseDuration(%q) = %v", s, d)
		}
	})
}

// parseUSDFlag never panics; an accepted amount is not negative, has at
// most 8 decimals and prints back to the same value.
func FuzzParseUSDFlag(f *testing.F) {
	for _, s := range []string{"12.5", "1.123456789", "-5", "0", "1e3", "1/3", ".5", "five", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := parseUSDFlag(s)
		if err != nil {
			return
		}
		if m < 0 {
			t.Fatalf("parseUSDFlag(%q) = %d", s, m)
		}
		back, err := gw.ParseUSD(m.USDString())
		if err != nil || back != m {
			t.Fatalf("%q -> %d -> %q -> %d, %v", s, m, m.USDString(), back, err)
		}
	})
}

// cliResult is one command line's outcome as a shell sees it.
type cliResult = clitest.Result

// runCLI runs one command line on the store at db (none: "") as the
// process would, in an environment with no settings.
func runCLI(t *testing.T, db string, args ...string) cliResult {
	t.Helper()
	clitest.Env(t)
	if db != "" {
		args = append(args, "--db", db)
	}
	return clitest.Run(t, Command, args...)
}
