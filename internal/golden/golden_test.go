package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/tools/txtar"
)

// recorder catches the failures Check reports.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func write(t *testing.T, files ...txtar.File) {
	t.Helper()
	t.Chdir(t.TempDir())
	if err := os.MkdirAll(filepath.Join("testdata", "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", "d", "case.txtar"), txtar.Format(&txtar.Archive{Files: files}), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCheck(t *testing.T) {
	write(t, txtar.File{Name: "in", Data: []byte("x\n")}, txtar.File{Name: "out", Data: []byte("y\n")})
	c := Load(t, "d", false)[0]
	r := &recorder{TB: t}
	c.Check(r, "out", []byte("y"))      // equal once the newline is added
	c.Check(r, "absent", nil)           // no output, no section: fine
	c.Check(r, "out", []byte("z"))      // differs
	c.Check(r, "absent", []byte("new")) // output with no section
	c.Drop(r, "in")                     // present but must not be
	if len(r.errs) != 3 {
		t.Fatalf("failures %q, want 3", r.errs)
	}
	if c.Name() != "case" || string(c.Input(t, "in")) != "x\n" {
		t.Fatal("name or input wrong")
	}
}

func TestUpdate(t *testing.T) {
	write(t, txtar.File{Name: "in", Data: []byte("x\n")}, txtar.File{Name: "out", Data: []byte("old\n")}, txtar.File{Name: "gone", Data: []byte("g\n")})
	c := Load(t, "d", true)[0]
	c.Check(t, "out", []byte("new"))
	c.Check(t, "added", []byte("a"))
	c.Drop(t, "gone")
	c.Save(t)
	a, err := txtar.ParseFile(c.Path)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range a.Files {
		got[f.Name] = string(f.Data)
	}
	if len(got) != 3 || got["in"] != "x\n" || got["out"] != "new\n" || got["added"] != "a\n" {
		t.Fatalf("saved %v", got)
	}
}
