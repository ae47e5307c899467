package gw_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README is the entry: short, and it maps every document in docs/.
func TestReadmeIsShortAndMapsDocs(t *testing.T) {
	readme := readFile(t, "README.md")
	if n := strings.Count(readme, "\n"); n > 300 {
		t.Errorf("README.md has %d lines; at most 300 (the rest belongs in docs/)", n)
	}
	docs, err := filepath.Glob("docs/*.md")
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs/*.md (%v)", err)
	}
	for _, d := range docs {
		if !strings.Contains(readme, "("+d+")") {
			t.Errorf("README.md does not link %s", d)
		}
	}
	for _, want := range []string{"go run ./cmd/gateway serve --fake-vendors", "go run ./cmd/testall",
		"/v1/messages", "/v1/chat/completions", "/v1/responses"} {
		if !strings.Contains(readme, want) {
			t.Errorf("README.md does not show %q", want)
		}
	}
}

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// Every relative link in the README and docs/ reaches a file, and an
// anchor reaches a heading of that file.
func TestDocLinksResolve(t *testing.T) {
	files, _ := filepath.Glob("docs/*.md")
	files = append(files, "README.md")
	for _, f := range files {
		for _, m := range mdLink.FindAllStringSubmatch(readFile(t, f), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			dest := f
			if path != "" {
				dest = filepath.Join(filepath.Dir(f), path)
			}
			b, err := os.ReadFile(dest)
			if err != nil {
				t.Errorf("%s: link %s: %v", f, target, err)
				continue
			}
			if anchor != "" && !hasAnchor(string(b), anchor) {
				t.Errorf("%s: link %s: %s has no heading for #%s", f, target, dest, anchor)
			}
		}
	}
}

// hasAnchor reports whether a Markdown document has a heading whose
// GitHub anchor is anchor.
func hasAnchor(doc, anchor string) bool {
	for _, line := range strings.Split(doc, "\n") {
		h := strings.TrimLeft(line, "#")
		if h == line || !strings.HasPrefix(h, " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(h)) {
			switch {
			case r == ' ' || r == '-':
				b.WriteRune('-')
			case r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
				b.WriteRune(r)
			}
		}
		if b.String() == anchor {
			return true
		}
	}
	return false
}

var (
	methodRef  = regexp.MustCompile(`\(\*(\w+)\)\.(\w+)(?:\([^)]*\))?(?: / (\w+))?`)
	qualified  = regexp.MustCompile(`(?:^|[^/\w.])([A-Za-z]\w*)\.([A-Z]\w*)\b`)
	atFile     = regexp.MustCompile(`(\w+)(?:\([^)]*\))?\s{2,}((?:[a-z0-9]+/)+[a-z0-9_]+\.go)\b`)
	codeBlocks = regexp.MustCompile("(?s)```\n(.*?)```")
)

// docs/ARCHITECTURE.md names the functions a request passes through; each
// must exist where the document says: a method (*T).M on T, a name
// beside a file declared in that file, pkg.Name in a package of that
// name, Type.Method on that type (interfaces included).
func TestArchitectureNamesRealCode(t *testing.T) {
	idx := indexCode(t)
	doc := readFile(t, "docs/ARCHITECTURE.md")
	checked := 0
	for _, m := range methodRef.FindAllStringSubmatch(doc, -1) {
		for _, name := range []string{m[2], m[3]} {
			if name == "" {
				continue
			}
			checked++
			if !idx.methods[m[1]][name] {
				t.Errorf("docs/ARCHITECTURE.md names (*%s).%s, which the code does not declare", m[1], name)
			}
		}
	}
	for _, block := range codeBlocks.FindAllStringSubmatch(doc, -1) {
		for _, m := range atFile.FindAllStringSubmatch(block[1], -1) {
			checked++
			if !idx.files[m[2]][m[1]] {
				t.Errorf("docs/ARCHITECTURE.md places %s in %s, which does not declare it", m[1], m[2])
			}
		}
	}
	for _, m := range qualified.FindAllStringSubmatch(doc, -1) {
		left, right := m[1], m[2]
		switch {
		case idx.packages[left] != nil:
			checked++
			if !idx.packages[left][right] {
				t.Errorf("docs/ARCHITECTURE.md names %s.%s, which package %s does not declare", left, right, left)
			}
		case idx.methods[left] != nil:
			checked++
			if !idx.methods[left][right] {
				t.Errorf("docs/ARCHITECTURE.md names %s.%s, which type %s does not have", left, right, left)
			}
		}
	}
	if checked < 40 {
		t.Errorf("only %d names checked: the patterns no longer read the document", checked)
	}
}

type codeIndex struct {
	files    map[string]map[string]bool // file -> functions and methods declared in it
	packages map[string]map[string]bool // package name -> top-level names
	methods  map[string]map[string]bool // type name -> methods (interface methods too)
}

func indexCode(t *testing.T) codeIndex {
	t.Helper()
	idx := codeIndex{files: map[string]map[string]bool{}, packages: map[string]map[string]bool{}, methods: map[string]map[string]bool{}}
	add := func(m map[string]map[string]bool, k, v string) {
		if m[k] == nil {
			m[k] = map[string]bool{}
		}
		m[k][v] = true
	}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "testdata", "vendor":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkg, file := f.Name.Name, filepath.ToSlash(path)
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				add(idx.files, file, d.Name.Name)
				if d.Recv == nil {
					add(idx.packages, pkg, d.Name.Name)
				} else {
					add(idx.methods, receiver(d.Recv.List[0].Type), d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						add(idx.packages, pkg, s.Name.Name)
						if it, ok := s.Type.(*ast.InterfaceType); ok {
							for _, m := range it.Methods.List {
								for _, n := range m.Names {
									add(idx.methods, s.Name.Name, n.Name)
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							add(idx.packages, pkg, n.Name)
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

// receiver returns a method's receiver type name without * and type
// parameters.
func receiver(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
