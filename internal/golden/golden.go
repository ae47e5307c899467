// Package golden runs golden-file tests kept as txtar archives: each
// archive in testdata/<dir> holds one case's input and expected outputs
// side by side, for a reader to open. Under the test package's -update
// flag, Check records what the code produced and Save writes it back.
package golden

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// Case is one archive.
type Case struct {
	Path    string
	Archive *txtar.Archive
	update  bool
	changed bool
}

// Load reads testdata/dir/*.txtar, failing the test when there are none.
// update is the test package's -update flag.
func Load(t testing.TB, dir string, update bool) []*Case {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", dir, "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no golden files in testdata/%s", dir)
	}
	cs := make([]*Case, 0, len(paths))
	for _, p := range paths {
		a, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, &Case{Path: p, Archive: a, update: update})
	}
	return cs
}

// Name is the archive's file name without ".txtar".
func (c *Case) Name() string { return strings.TrimSuffix(filepath.Base(c.Path), ".txtar") }

// File returns the named section.
func (c *Case) File(name string) ([]byte, bool) {
	for _, f := range c.Archive.Files {
		if f.Name == name {
			return f.Data, true
		}
	}
	return nil, false
}

// Input returns the named section, failing the test when it is missing.
func (c *Case) Input(t testing.TB, name string) []byte {
	t.Helper()
	b, ok := c.File(name)
	if !ok {
		t.Fatalf("%s: no %q section", c.Path, name)
	}
	return b
}

// Check compares got (given a final newline) with the named section. An
// empty got matches a missing section. Under -update it records got
// instead (an empty got removes the section).
func (c *Case) Check(t testing.TB, name string, got []byte) {
	t.Helper()
	if len(got) > 0 && got[len(got)-1] != '\n' {
		got = append(got, '\n')
	}
	want, ok := c.File(name)
	if c.update {
		if bytes.Equal(want, got) && (ok || len(got) == 0) {
			return
		}
		c.changed = true
		c.set(name, got)
		return
	}
	switch {
	case !ok && len(got) == 0:
	case !ok:
		t.Errorf("%s: no %q section; got:\n%s", c.Path, name, got)
	case !bytes.Equal(want, got):
		t.Errorf("%s: %s differs\n--- got\n%s--- want\n%s", c.Path, name, got, want)
	}
}

// Drop says the case must not have the named section: under -update it
// removes it, otherwise its presence fails the test.
func (c *Case) Drop(t testing.TB, name string) {
	t.Helper()
	if _, ok := c.File(name); !ok {
		return
	}
	if !c.update {
		t.Errorf("%s: unexpected %q section", c.Path, name)
		return
	}
	c.changed = true
	c.set(name, nil)
}

func (c *Case) set(name string, data []byte) {
	for i, f := range c.Archive.Files {
		if f.Name == name {
			if len(data) == 0 {
				c.Archive.Files = slices.Delete(c.Archive.Files, i, i+1)
			} else {
				c.Archive.Files[i].Data = data
			}
			return
		}
	}
	if len(data) > 0 {
		c.Archive.Files = append(c.Archive.Files, txtar.File{Name: name, Data: data})
	}
}

// Save writes the archive back when -update changed it.
func (c *Case) Save(t testing.TB) {
	t.Helper()
	if c.update && c.changed {
		if err := os.WriteFile(c.Path, txtar.Format(c.Archive), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
