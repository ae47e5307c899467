package reqbody

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"

	gw "github.com/gwlabs/gateway"
)

// FileText appends what the model reads of an attached file as
// third-party text (gw.TextTool, like a document): its name, and its
// content when it is text. data is a data: URL
// ("data:text/plain;base64,...") or bare base64 of media type media;
// content of a media type other than text/* (or JSON, XML, Markdown,
// CSV) is not text and is left out, as is data that does not decode to
// UTF-8.
func FileText(dst []gw.Text, filename, media, data string) []gw.Text {
	if filename = strings.TrimSpace(filename); filename != "" {
		dst = append(dst, gw.Text{Source: gw.TextTool, Text: filename})
	}
	b64 := true
	if rest, ok := strings.CutPrefix(data, "data:"); ok {
		head, payload, found := strings.Cut(rest, ",")
		if !found {
			return dst
		}
		mt, params, _ := strings.Cut(head, ";")
		media, data = mt, payload
		b64 = strings.Contains(params, "base64")
	}
	if data == "" || !textMedia(media) {
		return dst
	}
	text := data
	if b64 {
		dec, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			if dec, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(data, "=")); err != nil {
				return dst
			}
		}
		text = string(dec)
	}
	if text != "" && utf8.ValidString(text) {
		dst = append(dst, gw.Text{Source: gw.TextTool, Text: text})
	}
	return dst
}

// textMedia reports whether a media type's content is text a model reads
// as such.
func textMedia(media string) bool {
	media = strings.ToLower(strings.TrimSpace(media))
	if strings.HasPrefix(media, "text/") {
		return true
	}
	switch media {
	case "application/json", "application/xml", "application/x-yaml", "application/yaml", "application/markdown", "application/csv":
		return true
	}
	return false
}
