package rawjson

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

var (
	editorKeys   = []string{"model", "stream_options", "a<b", "m\u00f6del", "tools", "\xff", ""}
	editorValues = []string{`1`, `"x"`, `{"include_usage":true}`, `[{"role":"user","content":"hi \"there\""}]`, `null`, `{}`, `[]`, `[1,2]`, `"}"`}
)

// runEditor applies the edit script ops to body twice, with an Editor and
// with Set, Delete and Splice in turn, and fails unless both give the
// same bytes and the Editor's members are those Members finds in them.
func runEditor(t *testing.T, body, ops []byte) {
	t.Helper()
	obj, err := NewObject(body)
	if err != nil {
		return
	}
	ed := obj.Edit()
	want := body
	for len(ops) >= 3 {
		op, a, b := ops[0], int(ops[1]), int(ops[2])
		ops = ops[3:]
		key := editorKeys[a%len(editorKeys)]
		val := []byte(editorValues[b%len(editorValues)])
		var desc string
		switch op % 4 {
		case 0:
			desc = "Set " + key + " " + string(val)
			ed.Set(key, val)
			if want, err = Set(want, key, val); err != nil {
				t.Fatalf("Set: %v", err)
			}
		case 1:
			desc = "Delete " + key
			ed.Delete(key)
			if want, err = Delete(want, key); err != nil {
				t.Fatalf("Delete: %v", err)
			}
		case 2, 3:
			// An edit inside the last value named key: a whole new
			// value, or one more element of an array.
			ms, _ := Members(want)
			var m *Member
			for i := range ms {
				if ms[i].Key == key {
					m = &ms[i]
				}
			}
			if v := ed.Value(key); m == nil || !bytes.Equal(v, want[m.ValStart:m.ValEnd]) {
				if m != nil || v != nil {
					t.Fatalf("Value(%q) = %q, want %q", key, v, want[m.ValStart:m.ValEnd])
				}
			}
			var e Edit
			switch v := ed.Value(key); {
			case m == nil:
				if ed.EditValue(key, Edit{Text: val}) {
					t.Fatalf("EditValue(%q) found a member Members does not", key)
				}
				continue
			case op%4 == 3 && len(v) > 2 && v[0] == '[':
				e = Edit{Start: 1, End: 1, Text: []byte(`0,`)}
				if b%2 == 1 {
					e = Edit{Start: len(v) - 1, End: len(v) - 1, Text: []byte(`,0`)}
				}
			default:
				e = Edit{Start: 0, End: len(v), Text: val}
			}
			desc = "EditValue " + key
			ed.EditValue(key, e)
			want = Splice(want, Edit{Start: m.ValStart + e.Start, End: m.ValStart + e.End, Text: e.Text})
		}
		got := ed.Bytes()
		if !bytes.Equal(got, want) {
			t.Fatalf("after %s:\n got %q\nwant %q", desc, got, want)
		}
		if ed.Len() != len(want) {
			t.Fatalf("after %s: Len %d, want %d", desc, ed.Len(), len(want))
		}
		wms, err := Members(want)
		if err != nil {
			t.Fatalf("after %s: %q: %v", desc, want, err)
		}
		if len(wms) == 0 {
			wms = nil
		}
		gms := ed.Members()
		if len(gms) == 0 {
			gms = nil
		}
		if !reflect.DeepEqual(gms, wms) {
			t.Fatalf("after %s on %q:\n got members %+v\nwant %+v", desc, want, gms, wms)
		}
		if o := ed.Object(); !bytes.Equal(o.Bytes(), want) {
			t.Fatalf("Object bytes differ")
		}
	}
	for _, mark := range []string{`"x"`, `"model":`, `,0]`, `}}`} {
		if ed.Contains([]byte(mark)) != bytes.Contains(want, []byte(mark)) {
			t.Fatalf("Contains(%q) = %v on %q", mark, !bytes.Contains(want, []byte(mark)), want)
		}
	}
}

// An Editor gives, byte for byte, what Set, Delete and Splice give one
// after the other, with the members Members finds in the result.
func FuzzEditor(f *testing.F) {
	f.Add([]byte(`{"model":"a","messages":[]}`), []byte{0, 0, 1, 0, 2, 3, 1, 0, 0})
	f.Add([]byte(` { "a<b" : 1 ,"model":2, "model" :3 }`+"\n"), []byte{1, 0, 0, 1, 0, 0, 0, 0, 2, 0, 3, 4})
	f.Add([]byte(`{}`), []byte{0, 1, 2, 0, 2, 3, 1, 1, 0, 3, 1, 7})
	f.Add([]byte(`{"a":1}}`), []byte{0, 1, 2, 0, 1, 3})
	f.Add([]byte(`{"tools":[1,2],"m\u00f6del":{}}`), []byte{3, 4, 7, 3, 4, 8, 2, 3, 0, 1, 4, 0})
	f.Fuzz(func(t *testing.T, body, ops []byte) {
		runEditor(t, body, ops)
	})
}

// The same, over many random objects and scripts.
func TestEditorMatchesSetDeleteSplice(t *testing.T) {
	r := rand.New(rand.NewPCG(40, 7))
	rawKeys := []string{`"model"`, `"stream_options"`, `"tools"`, `"a<b"`, `"m\u00f6del"`, `"mod\u0065l"`, `"other"`, `""`}
	for range 20000 {
		var b bytes.Buffer
		b.WriteString([]string{"{", " {", "{\n  "}[r.IntN(3)])
		for i := range r.IntN(5) {
			if i > 0 {
				b.WriteString([]string{",", ", ", " ,\n"}[r.IntN(3)])
			}
			b.WriteString(rawKeys[r.IntN(len(rawKeys))])
			b.WriteString([]string{":", ": ", " : "}[r.IntN(3)])
			b.WriteString(editorValues[r.IntN(len(editorValues))])
		}
		b.WriteString([]string{"}", " }", "\n}\n", "}}"}[r.IntN(4)])
		ops := make([]byte, 3*r.IntN(8))
		for i := range ops {
			ops[i] = byte(r.IntN(256))
		}
		runEditor(t, b.Bytes(), ops)
	}
}

func TestObjectLookups(t *testing.T) {
	body := []byte(`{"model":"a","n":1,"model":"b"}`)
	o, err := NewObject(body)
	if err != nil {
		t.Fatal(err)
	}
	if got := o.Get("model"); string(got) != `"b"` {
		t.Fatalf("Get = %s", got)
	}
	if m, ok := o.Last("model"); !ok || m.KeyStart != 19 {
		t.Fatalf("Last = %+v %v", m, ok)
	}
	if o.Get("x") != nil {
		t.Fatal("Get of a missing key")
	}
	p := ObjectFrom(body, o.Members())
	if !bytes.Equal(p.Edit().Bytes(), body) {
		t.Fatal("an unedited Editor changed the bytes")
	}
	var v struct{ Model string }
	if json.Unmarshal(body, &v) != nil || v.Model != "b" {
		t.Fatal("the last member is the one encoding/json keeps")
	}
}

// TestEditorElementsKnown: the Editor gives the elements it was told
// for the value they are of while no edit changes it, and scans the
// value once an edit has (or for any other value).
func TestEditorElementsKnown(t *testing.T) {
	b := []byte(`{"model":"x", "messages" : [ {"a":1} , {"b":[2]} ],"tools":[1,2]}`)
	o, err := NewObject(b)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Elements(o.Get("messages"))
	if err != nil || len(want) != 2 {
		t.Fatal(want, err)
	}
	told := []Span{{Start: 2, End: 9}, {Start: 12, End: 21}}
	if !slices.Equal(told, want) {
		t.Fatalf("Elements %+v", want)
	}
	o.KnowElements("messages", told)
	e := o.Edit()
	e.Set("model", []byte(`"a-longer-model"`))
	if got, err := e.Elements(e.Value("messages")); err != nil || &got[0] != &told[0] {
		t.Fatalf("unedited messages: %+v, %v; want the spans told", got, err)
	}
	if got, err := e.Elements(e.Value("tools")); err != nil || len(got) != 2 || got[1] != (Span{Start: 3, End: 4}) {
		t.Fatalf("tools: %+v, %v", got, err)
	}
	e.EditValue("messages", Edit{Start: 1, End: 1, Text: []byte(`{"c":0},`)})
	v := e.Value("messages")
	got, err := e.Elements(v)
	scan, _ := Elements(v)
	if err != nil || len(got) != 3 || !slices.Equal(got, scan) {
		t.Fatalf("edited messages: %+v, %v; want %+v", got, err, scan)
	}
	// Nothing told: a scan.
	o2, _ := NewObject(b)
	if got, err := o2.Edit().Elements(o2.Get("messages")); err != nil || !slices.Equal(got, want) {
		t.Fatalf("nothing told: %+v, %v; want %+v", got, err, want)
	}
}
