package actuator

import (
	"slices"
	"testing"
)

// BasePath and Exposed are the one check of the base path and of an
// exposure name; cmd/eureka's flags, the Spring mapping and Config all
// give their answers.
func TestBasePathAndExposed(t *testing.T) {
	for in, want := range map[string]string{"/manage/": "/manage", "manage": "/manage", "/a/b": "/a/b"} {
		if got, err := BasePath(in); err != nil || got != want {
			t.Errorf("BasePath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"/", "", "//"} {
		if got, err := BasePath(in); err == nil {
			t.Errorf("BasePath(%q) = %q, want the refusal", in, got)
		}
	}
	if got, err := Exposed("*"); err != nil || !slices.Equal(got, Endpoints) {
		t.Errorf("Exposed(*) = %v, %v", got, err)
	}
	if got, err := Exposed("info"); err != nil || !slices.Equal(got, []string{"info"}) {
		t.Errorf("Exposed(info) = %v, %v", got, err)
	}
	if _, err := Exposed("env"); err == nil || err.Error() != `endpoint "env": not served here (health, info, prometheus, or *)` {
		t.Errorf("Exposed(env): %v", err)
	}
}
