package app

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gwlabs/gateway/reconcile"
)

func TestAdminKeysAreSettingsApartFromInferenceKeys(t *testing.T) {
	env := map[string]string{
		"GATEWAY_OPENAI_API_KEY":       "sk-serve",
		"GATEWAY_OPENAI_ADMIN_KEY":     "sk-admin-openai",
		"GATEWAY_ANTHROPIC_ADMIN_KEY":  "sk-ant-admin01-x",
		"GATEWAY_OPENAI_BASE_URL":      "http://127.0.0.1:1/openai/v1",
		"GATEWAY_GROQ_ADMIN_KEY":       "not read",
		"GATEWAY_DEEPSEEK_API_KEY":     "k1,k2@3",
		"GATEWAY_OPENROUTER_ADMIN_KEY": "sk-or-admin",
	}
	c, err := ConfigFromEnv(func(n string) string { return env[n] })
	if err != nil {
		t.Fatal(err)
	}
	if c.Vendors["openai"].AdminKey != "sk-admin-openai" || c.Vendors["anthropic"].AdminKey != "sk-ant-admin01-x" ||
		c.Vendors["openrouter"].AdminKey != "sk-or-admin" || c.Vendors["groq"].AdminKey != "" || c.Vendors["openai"].APIKey != "sk-serve" {
		t.Fatalf("vendors = %+v", c.Vendors)
	}
	if !SecretSetting("GATEWAY_OPENAI_ADMIN_KEY") {
		t.Error("GATEWAY_OPENAI_ADMIN_KEY is not secret")
	}
	set := c.VendorReports(nil, nil)
	if _, err := set.Sources["mistral"].Day(t.Context(), reconcileDay()); !errors.Is(err, reconcile.ErrNoReport) {
		t.Errorf("mistral: %v", err)
	}
	env["GATEWAY_DEEPSEEK_ADMIN_KEY"] = "k2"
	if _, err := ConfigFromEnv(func(n string) string { return env[n] }); err == nil || !strings.Contains(err.Error(), "GATEWAY_DEEPSEEK_ADMIN_KEY") || strings.Contains(err.Error(), "k2") {
		t.Errorf("an admin key that serves: %v", err)
	}
}

func reconcileDay() time.Time { return time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC) }
