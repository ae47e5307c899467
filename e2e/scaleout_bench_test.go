package e2e

import (
	"net/http"
	"os"
	"testing"

	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/storetest"
)

// BenchmarkScaleOut is the request path on the scale-out stores: billing
// on PostgreSQL and the key's limits in Redis (limits high enough never
// to deny, so that every request checks them), 16 requests per CPU at
// once, in one process with its client and fake vendor; compare its
// cpu-us/op with BenchmarkPassThrough's direct call. server-cpu-us/op is
// what the PostgreSQL and Redis server processes on this machine spent
// per request meanwhile (other clients of theirs count too). It needs
// GATEWAY_TEST_POSTGRES_URL and GATEWAY_TEST_REDIS_URL.
func BenchmarkScaleOut(b *testing.B) {
	pg, rd := os.Getenv("GATEWAY_TEST_POSTGRES_URL"), os.Getenv("GATEWAY_TEST_REDIS_URL")
	if pg == "" || rd == "" {
		b.Skip("GATEWAY_TEST_POSTGRES_URL and GATEWAY_TEST_REDIS_URL are needed")
	}
	m, _, key := startBenchGateway(b, pg, true, func(c *app.Config) {
		c.RedisURL = rd
		c.RPM, c.TPM = 1<<40, 1<<50
	})
	stop := storetest.ServerCPU(b, "postgres", "redis-server")
	runBench(b, benchEnv{url: "http://" + m.Addr(), path: "/v1/chat/completions", key: key,
		body: chatBody("openai/"+nativeModels["openai"], "Say hello.", false, ""), hdr: http.Header{"Content-Type": {"application/json"}}})
	stop()
	assertLedger(b, m)
}
