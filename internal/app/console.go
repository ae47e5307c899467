package app

import (
	"fmt"
	"io"
	"log/slog"
)

// console is what serve says on stdout at start (the address, the fake
// vendors, the demo key): lines of text, or with GATEWAY_LOG_FORMAT=json
// one JSON object per message, with its fields, so that a log pipeline
// reads stdout as it reads the logs.
type console struct {
	w    io.Writer
	json *slog.Logger // nil: text
}

func newConsole(w io.Writer, format string) *console {
	c := &console{w: w}
	if format == "json" {
		c.json = slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{ReplaceAttr: secondsAttr}))
	}
	return c
}

// say prints text, or in JSON msg with fields (key, value pairs).
func (c *console) say(text, msg string, fields ...any) {
	if c.json != nil {
		c.json.Info(msg, fields...)
		return
	}
	fmt.Fprint(c.w, text)
}
