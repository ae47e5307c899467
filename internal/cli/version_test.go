package cli

import (
	"strings"
	"testing"
)

// version and help work even when the configuration is invalid.
func TestVersionAndHelpIgnoreBadConfig(t *testing.T) {
	t.Setenv("GATEWAY_RPM", "lots")
	for _, args := range [][]string{{"version"}, {"--version"}, {"help"}} {
		var out, errb strings.Builder
		if err := Run(t.Context(), args, &out, &errb); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if out.Len() == 0 {
			t.Fatalf("%v printed nothing", args)
		}
	}
	var out, errb strings.Builder
	if err := Run(t.Context(), []string{"models"}, &out, &errb); err == nil || !strings.Contains(err.Error(), "GATEWAY_RPM") {
		t.Fatalf("models with a bad GATEWAY_RPM: %v", err)
	}
}
