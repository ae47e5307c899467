package sqlstore

import (
	"testing"
	"time"
)

// A time reads the same whichever way the store keeps it: SQLite's
// INTEGER microseconds and PostgreSQL's timestamptz both come back as the
// same instant in UTC, and a NULL leaves the destination alone.
func TestWhenReadsBothStoresTimes(t *testing.T) {
	want := time.Date(2026, 3, 4, 5, 6, 7, 8000, time.UTC)
	var a, b time.Time
	if err := When(&a).Scan(want.UnixMicro()); err != nil {
		t.Fatal(err)
	}
	if err := When(&b).Scan(want.In(time.FixedZone("x", 3600))); err != nil {
		t.Fatal(err)
	}
	if !a.Equal(want) || a.Location() != time.UTC || b != a {
		t.Fatalf("micros read as %v, time read as %v; want %v in UTC", a, b, want)
	}
	if err := When(&a).Scan(nil); err != nil || !a.Equal(want) {
		t.Fatalf("NULL: %v, %v", a, err)
	}
	if err := When(&a).Scan("2026-03-04"); err == nil {
		t.Fatal("a string read as a time")
	}
}

func TestLimitBoundsPages(t *testing.T) {
	for n, want := range map[int]int{-1: 100, 0: 100, 1: 1, 1000: 1000, 1001: 1000} {
		if got := Limit(n); got != want {
			t.Errorf("Limit(%d) = %d, want %d", n, got, want)
		}
	}
}

// A time that may be NULL (a key's end) reads as nil for NULL and as the
// instant, in UTC, for either store's form.
func TestWhenSetReadsNull(t *testing.T) {
	want := time.Date(2026, 3, 4, 5, 6, 7, 8000, time.UTC)
	end := &want
	if err := WhenSet(&end).Scan(nil); err != nil || end != nil {
		t.Fatalf("NULL read as %v (%v)", end, err)
	}
	for _, src := range []any{want.UnixMicro(), want.In(time.FixedZone("x", -7200))} {
		if err := WhenSet(&end).Scan(src); err != nil || end == nil || !end.Equal(want) || end.Location() != time.UTC {
			t.Fatalf("%T read as %v (%v)", src, end, err)
		}
	}
	if err := WhenSet(&end).Scan(1.5); err == nil {
		t.Fatal("a float read as a time")
	}
}
