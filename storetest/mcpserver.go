package storetest

import (
	"errors"
	"reflect"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

// testMCPServers checks the MCP servers added at run time: added once (a
// second add of the name is ErrMCPServerExists), every setting read back
// as written, replaced whole keeping its creation time, listed by name,
// removed (twice is ErrNotFound), and every change moving the key
// generation, so that running gateways pick it up.
func testMCPServers(t *testing.T, s gw.Store) {
	ctx := t.Context()
	ms, ok := s.(gw.MCPServerStore)
	if !ok {
		t.Fatalf("%T does not keep MCP servers", s)
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
	if list, err := ms.MCPServers(ctx); err != nil || len(list) != 0 {
		t.Fatalf("no servers yet: %+v %v", list, err)
	}
	g0 := gen()
	web := &gw.MCPServer{Name: "web", URL: "https://mcp.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer s3cret"},
		Timeout: 1500 * time.Millisecond, Price: 1000, ToolPrices: map[string]gw.Money{"search": 25}}
	files := &gw.MCPServer{Name: "files", Command: []string{"npx", "-y", "server-filesystem", "/srv"}, Env: map[string]string{"NODE_ENV": "production"}, Dir: "/srv"}
	for _, srv := range []*gw.MCPServer{web, files} {
		if err := ms.AddMCPServer(ctx, srv); err != nil {
			t.Fatalf("add %s: %v", srv.Name, err)
		}
	}
	if g1 := gen(); g1 == g0 {
		t.Fatal("key generation did not move on an added server")
	}
	if err := ms.AddMCPServer(ctx, &gw.MCPServer{Name: "web", URL: "https://other.example.com/mcp"}); !errors.Is(err, gw.ErrMCPServerExists) {
		t.Fatalf("second add of web: %v, want ErrMCPServerExists", err)
	}
	list, err := ms.MCPServers(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "files" || list[1].Name != "web" {
		t.Fatalf("servers = %+v %v, want files and web by name", list, err)
	}
	same := func(got gw.MCPServer, want *gw.MCPServer) bool {
		return got.URL == want.URL && reflect.DeepEqual(got.Headers, want.Headers) && reflect.DeepEqual(got.Command, want.Command) &&
			reflect.DeepEqual(got.Env, want.Env) && got.Dir == want.Dir && got.Timeout == want.Timeout && got.Price == want.Price &&
			reflect.DeepEqual(got.ToolPrices, want.ToolPrices)
	}
	if !same(list[0], files) || !same(list[1], web) {
		t.Fatalf("read back %+v, want %+v and %+v", list, files, web)
	}
	created := list[1].CreatedAt
	if created.IsZero() || list[1].UpdatedAt.Before(created) {
		t.Fatalf("times of web: %v %v", created, list[1].UpdatedAt)
	}
	g2 := gen()
	web2 := &gw.MCPServer{Name: "web", URL: "https://mcp2.example.com/mcp"}
	if err := ms.PutMCPServer(ctx, web2); err != nil {
		t.Fatal(err)
	}
	if err := ms.PutMCPServer(ctx, &gw.MCPServer{Name: "new", URL: "http://127.0.0.1:9/mcp"}); err != nil {
		t.Fatalf("put of a new name: %v", err)
	}
	list, _ = ms.MCPServers(ctx)
	if len(list) != 3 || list[2].Name != "web" || !same(list[2], web2) || !list[2].CreatedAt.Equal(created) {
		t.Fatalf("after replacing web: %+v", list)
	}
	if g3 := gen(); g3 == g2 {
		t.Fatal("key generation did not move on a replaced server")
	}
	g4 := gen()
	if err := ms.DeleteMCPServer(ctx, "web"); err != nil {
		t.Fatal(err)
	}
	if g5 := gen(); g5 == g4 {
		t.Fatal("key generation did not move on a removed server")
	}
	if err := ms.DeleteMCPServer(ctx, "web"); !errors.Is(err, gw.ErrNotFound) {
		t.Fatalf("second removal: %v, want ErrNotFound", err)
	}
	if list, _ = ms.MCPServers(ctx); len(list) != 2 || list[0].Name != "files" || list[1].Name != "new" {
		t.Fatalf("after removal: %+v", list)
	}
}
