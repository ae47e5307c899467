package billing

import (
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
)

// Issues 19.7 and 21.2: the hold covers every answer of this exact body,
// and a small balance gets a smaller output limit instead of a refusal.
func TestHold(t *testing.T) {
	b := New(defaultCard(t), Options{})
	tests := []struct {
		name string
		r    HoldRequest
		want HoldPlan
		// covers, when set, is the output-token figure a 402 must name.
		covers string
	}{
		{
			// 90 bytes -> 30 prompt tokens at gpt-6-sol's dearest prompt
			// rate (cache write, 250/token) = 7,500; 128 answers x 1,000
			// tokens x 1,000 = 128,000,000; x1.09 = 139,528,175.
			name: "n 128 counts every answer",
			r:    HoldRequest{Vendor: "openai", Model: "gpt-6-sol", BodyBytes: 90, MaxOutput: 1000, Choices: 128, Available: -1, CallerLimit: true},
			want: HoldPlan{Amount: 139_528_175, MaxOutput: 1000, OutputBound: 128_000},
		},
		{
			// The same from a $0.05 balance: 402. The balance covers t
			// with (7,500 + 128 x t x 1,000) x 1.09 <= 5,000,000: t = 35
			// (36 would need 5,030,895).
			name:   "n 128 from five cents",
			r:      HoldRequest{Vendor: "openai", Model: "gpt-6-sol", BodyBytes: 90, MaxOutput: 1000, Choices: 128, Available: 5 * gw.Cent, CallerLimit: true},
			covers: "35 output tokens",
		},
		{
			// No limit, $0.50: 30 prompt tokens at sonnet's 1-hour write
			// rate (400) = 12,000; t = 45,859 since (12,000 + 45,859,000)
			// x 1.09 = 49,999,390 <= 50,000,000 and one more is 50,000,480.
			name: "no limit, fifty cents: limit imposed",
			r:    HoldRequest{Vendor: "anthropic", Model: "claude-sonnet-5-5", BodyBytes: 90, Available: 50 * gw.Cent},
			want: HoldPlan{Amount: 49_999_390, MaxOutput: 45_859, OutputBound: 45_859, Imposed: true},
		},
		{
			// No limit, plenty of money: the model's maximum, 128,000:
			// (12,000 + 128,000,000) x 1.09 = 139,533,080.
			name: "no limit, enough money",
			r:    HoldRequest{Vendor: "anthropic", Model: "claude-sonnet-5-5", BodyBytes: 90, Available: 10 * gw.USD},
			want: HoldPlan{Amount: 139_533_080, MaxOutput: 128_000, OutputBound: 128_000},
		},
		{
			// $0.001 covers (100,000/1.09 - 12,000)/1,000 = 79.7 -> 79
			// tokens, below the 1,024 floor: 402 naming 79.
			name:   "no limit, below the floor",
			r:      HoldRequest{Vendor: "anthropic", Model: "claude-sonnet-5-5", BodyBytes: 90, Available: 100_000},
			covers: "79 output tokens",
		},
		{
			// An explicit limit the balance cannot cover is refused with
			// the same figure, never lowered.
			name:   "explicit limit unaffordable",
			r:      HoldRequest{Vendor: "anthropic", Model: "claude-sonnet-5-5", BodyBytes: 90, MaxOutput: 100_000, Available: 50 * gw.Cent, CallerLimit: true},
			covers: "45859 output tokens",
		},
		{
			// Not even the prompt: 0 tokens.
			name:   "prompt unaffordable",
			r:      HoldRequest{Vendor: "anthropic", Model: "claude-sonnet-5-5", BodyBytes: 90, Available: 1_000},
			covers: " 0 output tokens",
		},
		{
			name: "a limit above the model's maximum holds the maximum",
			r:    HoldRequest{Vendor: "anthropic", Model: "claude-sonnet-5-5", BodyBytes: 90, MaxOutput: 1 << 40, Available: -1, CallerLimit: true},
			want: HoldPlan{Amount: 139_533_080, MaxOutput: 128_000, OutputBound: 128_000},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := b.Hold(tc.r)
			if tc.covers != "" {
				if gw.ErrorCode(err) != gw.CodeInsufficientBalance || !strings.Contains(err.Error(), tc.covers) {
					t.Fatalf("Hold = %+v, %v; want 402 naming %q", got, err, tc.covers)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Hold = %+v, %v; want %+v", got, err, tc.want)
			}
			if got.Amount > tc.r.Available && tc.r.Available >= 0 {
				t.Fatalf("hold %d above the available %d", got.Amount, tc.r.Available)
			}
		})
	}
}
