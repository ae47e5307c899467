package dashboard

import (
	"slices"
	"strconv"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
)

// usd formats m in dollars with all eight decimals ("$0.00012345"), from
// Money.USDString: exact, never through a float.
func usd(m gw.Money) string {
	s := m.USDString()
	if rest, ok := strings.CutPrefix(s, "-"); ok {
		return "-$" + rest
	}
	return "$" + s
}

// usdBrief formats m for a table: dollars to four decimals, rounded half
// away from zero ("$0.0123", "$12.5000"); an amount below $0.0001 keeps
// its significant digits instead of showing as zero ("$0.00001234"). The
// exact amount (usd) goes in the cell's title.
func usdBrief(m gw.Money) string {
	const unit = gw.USD / 10_000 // $0.0001
	abs := m
	if abs < 0 {
		abs = -abs
	}
	if m == 0 || abs >= unit {
		q := abs / unit // in $0.0001; cannot overflow when rounded up
		if abs%unit*2 >= unit {
			q++
		}
		frac := strconv.FormatInt(int64(q%10_000), 10)
		s := "$" + strconv.FormatInt(int64(q/10_000), 10) + "." + strings.Repeat("0", 4-len(frac)) + frac
		if m < 0 {
			s = "-" + s
		}
		return s
	}
	s := usd(m)
	return strings.TrimRight(s, "0")
}

// usdShort formats m in dollars without trailing zeros beyond the cents
// ("$0.05", "$0.0125", "$12.00"), for chart axes. It is still exact.
func usdShort(m gw.Money) string {
	s := usd(m)
	dot := strings.IndexByte(s, '.')
	end := len(s)
	for end > dot+3 && s[end-1] == '0' {
		end--
	}
	return s[:end]
}

// cents formats m in cents with six decimals ("1.234567¢").
func cents(m gw.Money) string { return m.CentsString() + "¢" }

// count formats n with thousands separators ("12,345").
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// compact formats n briefly for chart axes ("950", "12.5k", "3M"),
// with at most two decimals, truncated.
func compact(n int64) string {
	units := [...]struct {
		size   int64
		suffix string
	}{{1_000_000_000, "B"}, {1_000_000, "M"}, {1_000, "k"}}
	for _, u := range units {
		if n < u.size {
			continue
		}
		whole, frac := n/u.size, n%u.size
		s := strconv.FormatInt(whole, 10)
		if frac != 0 {
			digits := len(strconv.FormatInt(u.size, 10)) - 1
			f := strconv.FormatInt(frac, 10)
			f = strings.Repeat("0", digits-len(f)) + f
			if len(f) > 2 {
				f = f[:2]
			}
			if f = strings.TrimRight(f, "0"); f != "" {
				s += "." + f
			}
		}
		return s + u.suffix
	}
	return strconv.FormatInt(n, 10)
}

// duration formats a latency: "—" when not measured, milliseconds below
// ten seconds, seconds above.
func duration(d time.Duration) string {
	switch {
	case d <= 0:
		return "—"
	case d < 10*time.Millisecond:
		return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64) + " ms"
	case d < 10*time.Second:
		return count(d.Milliseconds()) + " ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + " s"
}

// Time layouts shown on the pages, all in UTC.
const (
	timeLayout    = "2006-01-02 15:04:05"
	timeLayoutMs  = "2006-01-02 15:04:05.000 UTC"
	inputLayout   = "2006-01-02T15:04"
	hourLabel     = "15:00"
	dayLabel      = "Jan 2"
	bucketDayFull = "Mon 2006-01-02"
)

// endpointPath returns the HTTP path of a shape's endpoint.
func endpointPath(s gw.Shape) string {
	switch s {
	case gw.ShapeM:
		return "/v1/messages"
	case gw.ShapeC:
		return "/v1/chat/completions"
	case gw.ShapeR:
		return "/v1/responses"
	case gw.ShapeG:
		return "/v1beta/models/{model}:generateContent"
	case "":
		return "—"
	}
	return string(s)
}

// statusClass returns the badge class of an HTTP status.
func statusClass(status int) string {
	switch {
	case status >= 200 && status < 300:
		return "ok"
	case status >= 400 && status < 500:
		return "warn"
	case status >= 500:
		return "bad"
	}
	return "neutral"
}

// guardClass returns the badge class of a guard verdict.
func guardClass(verdict string) string {
	switch {
	case verdict == "pass":
		return "ok"
	case strings.HasPrefix(verdict, "flagged"):
		return "bad"
	case verdict == "error":
		return "warn"
	}
	return "neutral"
}

// vendors lists the vendor names the gateway routes to, for the filter.
func vendors() []string {
	return []string{"openai", "anthropic", "google", "together", "fireworks", "groq", "mistral", "deepseek", "openrouter"}
}

// statuses lists the HTTP statuses the gateway answers with, for the
// filter.
func statuses() []int {
	return []int{200, 400, 401, 402, 403, 404, 413, 429, 500, 502, 503, 504}
}

// prefixedModel is the model id as callers send it: "openai/gpt-6-sol".
func prefixedModel(vendor, model string) string {
	if vendor == "" {
		return model
	}
	return vendor + "/" + model
}

// splitPrefixed splits a prefixed model id ("openrouter/meta-llama/x")
// into its vendor and the vendor's model id. ok is false when the first
// segment names no vendor (a bare vendor model id such as
// "meta-llama/Llama-3").
func splitPrefixed(s string) (vendor, model string, ok bool) {
	vendor, model, ok = strings.Cut(s, "/")
	if !ok || model == "" || !slices.Contains(vendors(), vendor) {
		return "", s, false
	}
	return vendor, model, true
}
