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
		i, err := DecodeInstanceJSON(data)
		if err != nil {
			return
		}
		out := AppendInstanceJSON(nil, i)
		if _, err := DecodeInstanceJSON(out); err != nil {
			t.Fatalf("our own output does not decode: %v\n%s", err, out)
		}
	})
}

func FuzzDecodeInstanceXML(f *testing.F) {
	addRegisterSeeds(f, ".xml")
	for _, s := range []string{`<instance/>`, `<x><metadata><a>1</a></metadata></x>`, `<instance><port enabled="x">1</port></instance>`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		i, err := DecodeInstanceXML(data)
		if err != nil {
			return
		}
		out := AppendInstanceXML(nil, i)
		back, err := DecodeInstanceXML(out)
		if err != nil {
			t.Fatalf("our own output does not decode: %v\n%s", err, out)
		}
		if back.ID() != i.ID() && strings.TrimSpace(i.ID()) != "" && validXMLText(i.ID()) {
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
		apps, err := DecodeApplicationsJSON(data)
		if err != nil {
			return
		}
		if _, err := DecodeApplicationsJSON(AppendApplicationsJSON(nil, apps)); err != nil {
			t.Fatal(err)
		}
	})
}
