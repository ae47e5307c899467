package gw

import "testing"

func TestEffectiveGuardPolicy(t *testing.T) {
	if got := EffectiveGuardPolicy(nil, nil); got != (GuardPolicy{Mode: GuardBlock, Scope: "all"}) {
		t.Errorf("default = %+v", got)
	}
	account := &GuardPolicy{Mode: GuardMonitor, Scope: "user", ToolThreshold: 0.8}
	key := &GuardPolicy{Scope: "tools", UserThreshold: 0.95}
	want := GuardPolicy{Mode: GuardMonitor, Scope: "tools", UserThreshold: 0.95, ToolThreshold: 0.8}
	if got := EffectiveGuardPolicy(key, account); got != want {
		t.Errorf("key over account = %+v, want %+v", got, want)
	}
	if got := EffectiveGuardPolicy(&GuardPolicy{Mode: GuardOff}, account); got.Mode != GuardOff || got.Scope != "user" {
		t.Errorf("key off = %+v", got)
	}
}
