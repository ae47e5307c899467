package app

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gwlabs/gateway/fakevendor"
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

// serve --fake-vendors reads the fakes' reports with their admin keys, so
// reconciliation runs with no vendor key at all; a vendor with a real key
// keeps its own settings.
func TestFakeVendorsHaveAdminKeys(t *testing.T) {
	c, err := ConfigFromEnv(func(n string) string {
		return map[string]string{"GATEWAY_ANTHROPIC_API_KEY": "sk-real"}[n]
	})
	if err != nil {
		t.Fatal(err)
	}
	c.FakeVendors = true
	m := &Main{Config: c}
	if err := m.startFakeVendors(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.fake.Close() })
	if got := m.Config.Vendors["openai"]; got.AdminKey != fakevendor.AdminKey("openai") || got.AdminKey == got.APIKey {
		t.Errorf("openai: %+v", got)
	}
	if got := m.Config.Vendors["anthropic"]; got.AdminKey != "" || got.APIKey != "sk-real" {
		t.Errorf("anthropic (a real key): %+v", got)
	}
	if got := m.Config.Vendors["groq"]; got.AdminKey != "" {
		t.Errorf("groq has no report, got admin key %q", got.AdminKey)
	}
	rep, err := m.Config.VendorReports(nil, nil).Sources["openai"].Day(t.Context(), reconcileDay())
	if err != nil || rep.Vendor != "openai" {
		t.Errorf("openai report from the fake: %+v, %v", rep, err)
	}
}
