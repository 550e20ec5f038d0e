package httpapi

import (
	"strings"
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
)

// A registration's body names the app of its URL as Eureka compares them,
// both upper-cased: a name that only Unicode case folding makes equal
// (the Kelvin sign K for K) is refused 400 as a mismatch, so that an
// account bound to KAFKA cannot register, through /apps/KAFKA, an app
// whose name is not among its binding's (it would be listed as KAFKA
// beside KAFKA), on both front doors.
func TestBoundRegistrationNamesItsURLsApp(t *testing.T) {
	auth := AuthConfig{Users: []Account{account(t, "kaf", "k")}, Apps: map[string][]string{"kaf": {"KAFKA"}}}
	onFrontDoors(t, auth, func(t *testing.T, s *registry.Store, base string) {
		for _, body := range []struct{ url, app string }{
			{"KAFKA", "\u212aAFKA"},
			{"kafka", "KAF\u212aA"},
		} {
			got, text := call(t, "POST", base+body.url, "kaf", "k", eureka.AppendInstanceJSON(nil, testkit.SpringInst(body.app, "k1")))
			if got != 400 || !strings.Contains(text, "Mismatched appName") {
				t.Errorf("POST %s with app %+q: %d %q, want 400 Mismatched appName", body.url, body.app, got, text)
			}
		}
		if got, text := call(t, "POST", base+"kafka", "kaf", "k", eureka.AppendInstanceJSON(nil, testkit.SpringInst("Kafka", "k2"))); got != 204 {
			t.Errorf("POST kafka with app Kafka: %d %q, want 204", got, text)
		}
		for _, app := range s.Applications().Applications {
			if app.Name != "KAFKA" {
				t.Errorf("the registry holds app %+q, outside the binding", app.Name)
			}
		}
	})
}
