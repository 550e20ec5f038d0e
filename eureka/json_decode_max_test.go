package eureka

import (
	"errors"
	"testing"
)

// DecodeApplicationsJSONMax reads a registry of max instances and stops
// at the instance past it, across applications; 0 bounds nothing.
func TestDecodeApplicationsJSONMax(t *testing.T) {
	doc := []byte(`{"applications":{"application":[` +
		`{"name":"A","instance":[{"instanceId":"a1","app":"A"},{"instanceId":"a2","app":"A"}]},` +
		`{"name":"B","instance":{"instanceId":"b1","app":"B"}}]}}`)
	for _, c := range []struct {
		max  int
		want error
	}{{0, nil}, {3, nil}, {4, nil}, {2, ErrTooManyInstances}, {1, ErrTooManyInstances}} {
		apps, err := DecodeApplicationsJSONMax(doc, c.max)
		if !errors.Is(err, c.want) || (err == nil && len(apps.Applications) != 2) {
			t.Errorf("max %d: %v, %v; want %v", c.max, apps, err, c.want)
		}
	}
	// The read stops at the instance past the bound: what follows it is
	// never read (here, a broken one), nor is its memory spent.
	broken := []byte(`{"applications":{"application":[{"name":"A","instance":[{"instanceId":"a1"},{"instanceId":`)
	if _, err := DecodeApplicationsJSONMax(broken, 1); !errors.Is(err, ErrTooManyInstances) {
		t.Errorf("a document broken past the bound: %v, want ErrTooManyInstances", err)
	}
	if _, err := DecodeApplicationsJSONMax(broken, 5); !errors.Is(err, ErrCannotParse) {
		t.Errorf("a document broken within the bound: %v, want ErrCannotParse", err)
	}
}
