// Package datauri reads the inline media that the OpenAI shapes (Chat
// Completions and Responses) carry as URLs: base64 data: URIs and
// http(s) image URLs, into the canonical part.
package datauri

import (
	"strings"

	gw "github.com/gwlabs/gateway"
)

// Parse splits "data:<media type>[;params];base64,<data>", the media type
// lower-cased; ok is false for anything else (not base64 included).
func Parse(s string) (mediaType, data string, ok bool) {
	rest, found := strings.CutPrefix(s, "data:")
	if !found {
		return "", "", false
	}
	meta, data, found := strings.Cut(rest, ",")
	if !found {
		return "", "", false
	}
	params := strings.Split(meta, ";")
	if len(params) < 2 || params[len(params)-1] != "base64" {
		return "", "", false
	}
	return strings.ToLower(strings.TrimSpace(params[0])), data, true
}

// Image reads an image given by url (a base64 data: URI of a type every
// vendor takes, or an http(s) URL) as the part; field names it in the
// caller's 400.
func Image(url, field string) (gw.Part, error) {
	if strings.HasPrefix(url, "data:") {
		mt, data, ok := Parse(url)
		if !ok {
			return gw.Part{}, invalid("%s must be a base64 data: URI or an http(s) URL", field)
		}
		if mt == "image/jpg" {
			mt = "image/jpeg"
		}
		switch mt {
		case "image/jpeg", "image/png", "image/gif", "image/webp":
		default:
			return gw.Part{}, invalid("%s: image media type %q is not one of image/jpeg, image/png, image/gif, image/webp", field, mt)
		}
		return gw.Part{Type: gw.PartImage, MediaType: mt, Data: data}, nil
	}
	if strings.HasPrefix(url, "https://") || strings.HasPrefix(url, "http://") {
		return gw.Part{Type: gw.PartImage, URL: url}, nil
	}
	return gw.Part{}, invalid("%s must be a base64 data: URI or an http(s) URL", field)
}

func invalid(format string, args ...any) *gw.Error {
	return gw.Errorf(gw.CodeInvalidRequest, format, args...)
}
