package notify_test

import (
	"testing"

	"github.com/eurekagate/eurekagate/discovery"
	"github.com/eurekagate/eurekagate/notify"
	"github.com/eurekagate/eurekagate/registry"
)

// The Store and the discovery client are Notifiers; anything else gives
// nil and a channel that never receives.
func TestOf(t *testing.T) {
	var (
		_ notify.Notifier = (*registry.Store)(nil)
		_ notify.Notifier = (*discovery.Client)(nil)
	)
	s := registry.New(registry.Config{})
	if n, ch := notify.Of(s); n == nil || ch == nil {
		t.Errorf("Of(Store) = %v, %v", n, ch)
	}
	if n, ch := notify.Of(struct{}{}); n != nil || ch != nil {
		t.Errorf("Of(struct{}{}) = %v, %v", n, ch)
	}
}
