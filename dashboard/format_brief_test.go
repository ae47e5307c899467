package dashboard

import (
	"testing"

	gw "github.com/gwlabs/gateway"
)

func TestUSDBrief(t *testing.T) {
	for m, want := range map[gw.Money]string{
		0:                         "$0.0000",
		gw.USD:                    "$1.0000",
		12_345_678:                "$0.1235", // $0.12345678 rounds half up
		12_344_999:                "$0.1234",
		15_000:                    "$0.0002", // $0.00015: half of the last place rounds up
		5_000:                     "$0.00005",
		4_999:                     "$0.00004999",
		1_234:                     "$0.00001234",
		1:                         "$0.00000001",
		-12_345_678:               "-$0.1235",
		-1_234:                    "-$0.00001234",
		-15_000:                   "-$0.0002",
		123 * gw.USD:              "$123.0000",
		9_223_372_036_854_775_807: "$92233720368.5478",
	} {
		if got := usdBrief(m); got != want {
			t.Errorf("usdBrief(%d) = %q, want %q", int64(m), got, want)
		}
	}
}
