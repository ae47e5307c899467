package ratecard

import (
	"bytes"
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	base := `{"version":"a","effective":"2026-01-01","models":[
 {"vendor":"openai","id":"m1","input":"2.00","output":"8.00","max_output_tokens":100,"source":"s","date":"2026-01-01"},
 {"vendor":"groq","id":"m2","input":"1.00","output":"1.00","max_output_tokens":100,"source":"s","date":"2026-01-01"}]}`
	next := `{"version":"b","effective":"2026-02-01","models":[
 {"vendor":"openai","id":"m1","input":"2.50","cached_input":"0.25","output":"8.00","max_output_tokens":200,"source":"s","date":"2026-02-01"},
 {"vendor":"mistral","id":"m3","input":"0.10","output":"0.30","max_output_tokens":100,"source":"s","date":"2026-02-01"}]}`
	a, err := Load(strings.NewReader(base))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Load(strings.NewReader(next))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteDiff(&buf, Diff(a, b)); err != nil {
		t.Fatal(err)
	}
	want := `added    mistral/m3 input/output 0.10/0.30
changed  openai/m1 input: 2.00 -> 2.50 (25.0%)
changed  openai/m1 cached_input: (none) -> 0.25
changed  openai/m1 max_output_tokens: 100 -> 200 (100.0%)
changed  openai/m1 date: 2026-01-01 -> 2026-02-01
removed  groq/m2 input/output 1.00/1.00 (an overlay keeps this entry)
`
	if buf.String() != want {
		t.Errorf("diff:\n%s\nwant:\n%s", buf.String(), want)
	}
	buf.Reset()
	if err := WriteDiff(&buf, Diff(a, a)); err != nil || buf.String() != "no differences\n" {
		t.Errorf("self diff %q, %v", buf.String(), err)
	}
}
