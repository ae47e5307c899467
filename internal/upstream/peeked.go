package upstream

import "io"

// peeked is a body whose first bytes were read already.
type peeked struct {
	head []byte
	eof  bool
	rest io.ReadCloser
	buf  [512]byte // where head was read
}

func (p *peeked) Read(b []byte) (int, error) {
	if len(p.head) > 0 {
		n := copy(b, p.head)
		p.head = p.head[n:]
		return n, nil
	}
	if p.eof {
		return 0, io.EOF
	}
	return p.rest.Read(b)
}

func (p *peeked) Close() error { return p.rest.Close() }
