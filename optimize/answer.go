package optimize

import (
	"net/http"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/rawjson"
)

// DirectiveText is the directive the optimizer adds (Text): the guard's
// answer side protects it like the caller's own system content.
func (o *Optimizer) DirectiveText() string { return Text }

// PrepareEditMarked is PrepareEdit with marker written after the
// directive's text: the guard's per-request canary.
func (o *Optimizer) PrepareEditMarked(shape gw.Shape, e *rawjson.Editor, keyOff bool, h http.Header, marker string) (bool, error) {
	if !o.Enabled(keyOff, h.Get(Header)) || shape == gw.ShapeM && continuesThread(e.Value("thread")) {
		return false, nil
	}
	if err := ApplyEditMarked(shape, e, marker); err != nil {
		return false, err
	}
	return true, nil
}
