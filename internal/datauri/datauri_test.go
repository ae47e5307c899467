package datauri

import (
	"testing"

	gw "github.com/gwlabs/gateway"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in, mt, data string
		ok           bool
	}{
		{"data:image/PNG;base64,AAAA", "image/png", "AAAA", true},
		{"data:text/plain;charset=utf-8;base64,aGk=", "text/plain", "aGk=", true},
		{"data:text/plain,hi", "", "", false}, // not base64
		{"data:image/png;base64", "", "", false},
		{"https://x/y.png", "", "", false},
	} {
		mt, data, ok := Parse(c.in)
		if mt != c.mt || data != c.data || ok != c.ok {
			t.Errorf("Parse(%q) = %q, %q, %v; want %q, %q, %v", c.in, mt, data, ok, c.mt, c.data, c.ok)
		}
	}
}

func TestImage(t *testing.T) {
	p, err := Image("data:image/jpg;base64,AAAA", "f")
	if err != nil || p.Type != gw.PartImage || p.MediaType != "image/jpeg" || p.Data != "AAAA" {
		t.Errorf("jpg data URI: %+v %v", p, err)
	}
	if p, err := Image("https://x/y.png", "f"); err != nil || p.URL != "https://x/y.png" {
		t.Errorf("URL: %+v %v", p, err)
	}
	for _, bad := range []string{"data:image/tiff;base64,AAAA", "ftp://x/y.png", "data:image/png,AAAA"} {
		if _, err := Image(bad, "messages[0].content[1].image_url.url"); gw.AsError(err).Code != gw.CodeInvalidRequest {
			t.Errorf("Image(%q) = %v, want a 400", bad, err)
		}
	}
}
