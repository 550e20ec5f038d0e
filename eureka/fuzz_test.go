package eureka

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func addRegisterSeeds(f *testing.F, suffix string) {
	files, _ := filepath.Glob(filepath.Join("testdata", "register", "*"+suffix))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// Whatever the input, decoding does not panic, and what decodes can be
// written and read back.
func FuzzDecodeInstanceJSON(f *testing.F) {
	addRegisterSeeds(f, ".json")
	for _, s := range []string{`{}`, `null`, `{"instance":null}`, `{"instance":{"port":"8"}}`, `{"metadata":{"@class":1}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		roundTrip(t, data, DecodeInstanceJSON, AppendInstanceJSON)
	})
}

func FuzzDecodeInstanceXML(f *testing.F) {
	addRegisterSeeds(f, ".xml")
	for _, s := range []string{`<instance/>`, `<x><metadata><a>1</a></metadata></x>`, `<instance><port enabled="x">1</port></instance>`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		i, back, ok := roundTrip(t, data, DecodeInstanceXML, AppendInstanceXML)
		if ok && back.ID() != i.ID() && strings.TrimSpace(i.ID()) != "" && validXMLText(i.ID()) {
			t.Fatalf("id changed in round trip: %q -> %q", i.ID(), back.ID())
		}
	})
}

func validXMLText(s string) bool {
	return string(AppendXMLText(nil, s)) == strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;", "\r", "&#xd;").Replace(s)
}

func FuzzDecodeApplicationsJSON(f *testing.F) {
	f.Add(AppendApplicationsJSON(nil, sampleApps()))
	f.Add([]byte(`{"applications":{"application":{"instance":{}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		roundTrip(t, data, DecodeApplicationsJSON, AppendApplicationsJSON)
	})
}

// roundTrip decodes data and, if that works, writes what it read and reads
// that back, which must work too.
func roundTrip[T any](t *testing.T, data []byte, decode func([]byte) (T, error), encode func([]byte, T) []byte) (first, back T, ok bool) {
	t.Helper()
	first, err := decode(data)
	if err != nil {
		return first, back, false
	}
	out := encode(nil, first)
	if back, err = decode(out); err != nil {
		t.Fatalf("our own output does not decode: %v\n%s", err, out)
	}
	return first, back, true
}
