package guard

import (
	"go/parser"
	gotoken "go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsOnlyStdlibAndRoot keeps the guard a leaf policy package: the
// standard library and the root package only, so it can be tested alone
// and never pulls in a vendor, a store or net/http.
func TestImportsOnlyStdlibAndRoot(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := gotoken.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			first, _, _ := strings.Cut(p, "/")
			if p == "github.com/gwlabs/gateway" || !strings.Contains(first, ".") {
				if p == "net/http" {
					t.Errorf("%s imports net/http: the guard sees text, not requests", f)
				}
				continue
			}
			t.Errorf("%s imports %s: only the standard library and the root package are allowed", f, p)
		}
	}
}
