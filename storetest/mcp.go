package storetest

import (
	"errors"
	"reflect"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

// testMCPGrants checks the MCP allow lists: per key and per account,
// replaced whole, removed with nil, an empty list kept as empty (it
// grants nothing, unlike no list), an unknown subject refused, and every
// change moving the key generation.
func testMCPGrants(t *testing.T, s gw.Store) {
	ctx := t.Context()
	a := account(t, s, "mcp-grants", 0)
	k := &gw.Key{ID: "key_mcp", AccountID: a.ID, Hint: "gwk_…m"}
	if err := s.CreateKey(ctx, k, hash("mcp-secret")); err != nil {
		t.Fatal(err)
	}
	if kg, ag, err := s.MCPGrants(ctx, k.ID, a.ID); err != nil || kg != nil || ag != nil {
		t.Fatalf("no grants yet: %v %v %v", kg, ag, err)
	}
	gs, ok := s.(generationStore)
	if !ok {
		t.Fatalf("%T does not count key changes", s)
	}
	gen := func() int64 {
		t.Helper()
		g, err := gs.KeyGeneration(ctx)
		if err != nil {
			t.Fatalf("KeyGeneration: %v", err)
		}
		return g
	}
	g0 := gen()
	kg := &gw.MCPGrant{Allow: []string{"github__create_issue", "files"}, ToolRPM: 30}
	if err := s.SetMCPGrant(ctx, "key", k.ID, kg); err != nil {
		t.Fatal(err)
	}
	if err := s.SetMCPGrant(ctx, "account", a.ID, &gw.MCPGrant{Allow: []string{}}); err != nil {
		t.Fatal(err)
	}
	gotK, gotA, err := s.MCPGrants(ctx, k.ID, a.ID)
	if err != nil || !reflect.DeepEqual(gotK, kg) || gotA == nil || gotA.Allow == nil || len(gotA.Allow) != 0 {
		t.Fatalf("grants = %+v %+v %v, want %+v and an empty account list", gotK, gotA, err, kg)
	}
	if g1 := gen(); g1 == g0 {
		t.Fatalf("key generation did not move on a grant (%d)", g1)
	}
	kg2 := &gw.MCPGrant{Allow: []string{"*"}}
	if err := s.SetMCPGrant(ctx, "key", k.ID, kg2); err != nil {
		t.Fatal(err)
	}
	if gotK, _, _ := s.MCPGrants(ctx, k.ID, a.ID); !reflect.DeepEqual(gotK, kg2) {
		t.Fatalf("replaced grant = %+v, want %+v", gotK, kg2)
	}
	g2 := gen()
	if err := s.SetMCPGrant(ctx, "account", a.ID, nil); err != nil {
		t.Fatal(err)
	}
	if _, gotA, _ := s.MCPGrants(ctx, k.ID, a.ID); gotA != nil {
		t.Fatalf("removed account grant = %+v", gotA)
	}
	if g3 := gen(); g3 == g2 {
		t.Fatal("key generation did not move on a removal")
	}
	if err := s.SetMCPGrant(ctx, "key", "key_nope", kg); !errors.Is(err, gw.ErrNotFound) {
		t.Fatalf("unknown key: %v, want ErrNotFound", err)
	}
	if err := s.SetMCPGrant(ctx, "team", a.ID, kg); err == nil {
		t.Fatal("unknown subject accepted")
	}
	if err := s.SetMCPGrant(ctx, "key", k.ID, &gw.MCPGrant{Allow: []string{"a\nb"}}); err == nil {
		t.Fatal("an entry with a newline accepted")
	}
}

// testRecordsByEndpoint: RecordFilter.Endpoint selects one endpoint's
// records (the MCP tool calls), with the other filters.
func testRecordsByEndpoint(t *testing.T, s gw.Store) {
	ctx := t.Context()
	a := account(t, s, "by-endpoint", 0)
	now := time.Now().UTC()
	for _, r := range []gw.Record{
		{RequestID: "req_e1", AccountID: a.ID, KeyID: "k", Endpoint: "mcp", Vendor: "github", Model: "create_issue", Status: 200, CreatedAt: now},
		{RequestID: "req_e2", AccountID: a.ID, KeyID: "k", Endpoint: gw.ShapeC, Vendor: "openai", Model: "gpt", Status: 200, CreatedAt: now},
		{RequestID: "req_e3", AccountID: a.ID, KeyID: "k", Endpoint: "mcp", Vendor: "files", Model: "read", Status: 502, CreatedAt: now.Add(time.Millisecond)},
	} {
		if err := s.Log(ctx, &r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Records(ctx, gw.RecordFilter{AccountID: a.ID, Endpoint: "mcp"})
	if err != nil || len(got) != 2 || got[0].RequestID != "req_e3" || got[1].RequestID != "req_e1" {
		t.Fatalf("mcp records = %+v, %v", got, err)
	}
	got, err = s.Records(ctx, gw.RecordFilter{AccountID: a.ID, Endpoint: "mcp", Vendor: "github"})
	if err != nil || len(got) != 1 || got[0].Model != "create_issue" {
		t.Fatalf("mcp records of github = %+v, %v", got, err)
	}
}
