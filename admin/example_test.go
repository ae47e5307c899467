package admin_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/gwlabs/gateway/admin"
	"github.com/gwlabs/gateway/sqlite"
)

// A Client drives a running gateway's admin API (GATEWAY_ADMIN_TOKEN on
// the gateway, the same token here). This example serves the API itself
// from a fresh SQLite store; against a real gateway, BaseURL is its
// address.
func ExampleClient() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "admin-example")
	defer os.RemoveAll(dir)
	db, err := sqlite.Open(ctx, filepath.Join(dir, "gateway.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	token := strings.Repeat("t", admin.MinTokenLen)
	h, err := admin.NewHandler(&admin.Local{Store: db}, token, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	c := &admin.Client{BaseURL: srv.URL, Token: token}
	if _, err := c.CreateAccount(ctx, "acme"); err != nil {
		fmt.Println(err)
		return
	}
	top, err := c.TopUp(ctx, "acme", admin.TopUpRequest{AmountUSD: "25", Reference: "invoice-1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("available:", top.Account.Balance.Available)
	k, err := c.CreateKey(ctx, admin.KeyRequest{Account: "acme", Name: "ci", Models: []string{"openai/*"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("secret shown once:", strings.HasPrefix(k.Secret, "gwk_"), "models:", k.Models)
	// A repeated reference is the same top-up, not a second one.
	again, _ := c.TopUp(ctx, "acme", admin.TopUpRequest{AmountUSD: "25", Reference: "invoice-1"})
	fmt.Println("duplicate:", again.Duplicate, "available:", again.Account.Balance.Available)
	// Output:
	// available: 25.00000000
	// secret shown once: true models: [openai/*]
	// duplicate: true available: 25.00000000
}
