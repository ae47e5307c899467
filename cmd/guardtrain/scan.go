package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gwlabs/gateway/guard"
)

// scanLimit is how much of a file a scan scores: a coding agent reads
// long files in pieces, and the guard scores a segment in windows anyway.
const scanLimit = 64 << 10

// scanResult is what a scan of source files found.
type scanResult struct {
	files   int
	flagged []string // "path score reason", in walk order
}

// scanFiles scores each file under dirs whose name ends in one of exts
// as a tool result (the way coding agents send the files they read),
// with the model embedded in this build. Every directory is walked;
// skip, if set, leaves out the paths it reports true for.
func scanFiles(dirs, exts []string, skip func(string) bool) (scanResult, error) {
	g, err := guard.New(guard.Config{})
	if err != nil {
		return scanResult{}, err
	}
	var ends []string
	for _, e := range exts {
		if e = strings.TrimSpace(e); e != "" {
			ends = append(ends, e)
		}
	}
	var res scanResult
	for _, dir := range dirs {
		dir = strings.TrimSpace(dir)
		if dir == "" {
			continue
		}
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !slices.ContainsFunc(ends, func(e string) bool { return strings.HasSuffix(p, e) }) {
				return nil
			}
			if skip != nil && skip(p) {
				return nil
			}
			b, err := readHead(p, scanLimit)
			if err != nil {
				return err
			}
			res.files++
			if v := g.Check([]guard.Segment{{Source: guard.SourceTool, Text: string(b)}}); v.Flagged {
				res.flagged = append(res.flagged, fmt.Sprintf("%s %.3f %s", p, v.Score, v.Reason))
			}
			return nil
		})
		if err != nil {
			return res, fmt.Errorf("scan %s: %w", dir, err)
		}
	}
	return res, nil
}

// scan prints what scanFiles found: the share of files flagged and the
// flagged files.
func scan(dirs, exts []string, w io.Writer) error {
	res, err := scanFiles(dirs, exts, nil)
	if err != nil {
		return err
	}
	rate := 0.0
	if res.files > 0 {
		rate = float64(len(res.flagged)) / float64(res.files)
	}
	fmt.Fprintf(w, "scanned %d files as tool results: %d flagged (%.4f)\n", res.files, len(res.flagged), rate)
	for _, f := range res.flagged {
		fmt.Fprintln(w, "  "+f)
	}
	return nil
}

// readHead reads at most n bytes of a file.
func readHead(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}
