package httpapi

import (
	"strings"
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry"
)

// A bound account registers only under its apps' names, VIPs included:
// Spring Cloud's DiscoveryClient finds a service by its VIP address
// (spring.application.name), so an ORDERS instance that named payments
// as its VIP would receive PAYMENTS' traffic. Refused 403 with the
// reason naming no one, on both front doors; its own VIP (any case) is
// registered, and an unbound account's VIPs stay free.
func TestBoundRegistrationVIPs(t *testing.T) {
	auth := AuthConfig{Users: []Account{account(t, "orders", "o"), account(t, "free", "f")}, Apps: map[string][]string{"orders": {"ORDERS", "ORDERS-*"}}}
	onFrontDoors(t, auth, func(t *testing.T, s *registry.Store, base string) {
		reg := func(user, pass, id, vip, svip string) (int, string) {
			i := inst("ORDERS", id)
			i.VIPAddress, i.SecureVIPAddress = vip, svip
			return call(t, "POST", base+"ORDERS", user, pass, eureka.AppendInstanceJSON(nil, i))
		}
		for _, c := range []struct {
			user, pass, id, vip, svip string
			want                      int
		}{
			{"orders", "o", "o1", "payments", "", 403},
			{"orders", "o", "o2", "orders,payments", "", 403},
			{"orders", "o", "o3", "orders", "payments", 403},
			{"orders", "o", "o4", "orders,orders-eu", "ORDERS", 204},
			{"orders", "o", "o5", "", "", 204},
			{"free", "f", "o6", "payments", "payments", 204},
		} {
			got, body := reg(c.user, c.pass, c.id, c.vip, c.svip)
			if got != c.want {
				t.Errorf("%s registers ORDERS with VIPs %q, %q: %d %q, want %d", c.user, c.vip, c.svip, got, body, c.want)
			}
			if got == 403 && body != refusedApp {
				t.Errorf("the refusal says %q, want %q", body, refusedApp)
			}
		}
		for _, id := range []string{"o1", "o2", "o3"} {
			if _, ok := s.Get("ORDERS", id); ok {
				t.Errorf("a registration refused for its VIPs is in the registry: %s", id)
			}
		}
	})
}

// onFrontDoors runs f on each front door of an API with auth over a new
// Store, base being the URL of its apps.
func onFrontDoors(t *testing.T, auth AuthConfig, f func(t *testing.T, s *registry.Store, base string)) {
	for _, door := range []string{"net/http", "fasthttp"} {
		t.Run(strings.ReplaceAll(door, "/", "-"), func(t *testing.T) {
			s, _ := newTestStore(t, registry.Config{})
			f(t, s, frontDoorURLs(t, NewAPI(s, APIConfig{Auth: auth}))[door]+"/eureka/apps/")
		})
	}
}
