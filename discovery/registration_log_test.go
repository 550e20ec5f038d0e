package discovery

import (
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// One registration is logged once, as the registry logs it: the status
// change that follows it (STARTING, then UP, as an application that
// registers before it serves) updates it, and is no second
// "instance registered"; a registration the registry lost and got again
// is logged again.
func TestRegistrationLoggedOnce(t *testing.T) {
	srv := startOurServer(t, "127.0.0.1:0")
	core, logs := observer.New(zapcore.InfoLevel)
	c, err := New(Config{
		ServiceURLs: []string{srv.URL()},
		Logger:      zap.New(core),
		Instance: &InstanceConfig{AppName: "orders", HostName: "127.0.0.1", Port: 7070,
			Status: eureka.StatusStarting, LeaseRenewalInterval: 50 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	c.Start()
	defer stopClient(t, c)
	const id = "127.0.0.1:orders:7070"
	testkit.Eventually(t, 5*time.Second, "registration", func() bool { _, ok := srv.Store.Get("ORDERS", id); return ok })
	if err := c.SetStatus(eureka.StatusUp); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 5*time.Second, "status UP", func() bool {
		i, _ := srv.Store.Get("ORDERS", id)
		return i != nil && i.Status == eureka.StatusUp
	})
	if n := logs.FilterMessage("instance registered").Len(); n != 1 {
		t.Fatalf("%d \"instance registered\" lines for one registration, want 1", n)
	}

	// The registry loses it: the heartbeat's 404 registers it again,
	// which is logged.
	srv.Stop()
	restarted := startOurServer(t, srv.Addr)
	testkit.Eventually(t, 5*time.Second, "re-registration after restart", func() bool { _, ok := restarted.Store.Get("ORDERS", id); return ok })
	testkit.Eventually(t, 5*time.Second, "second log line", func() bool { return logs.FilterMessage("instance registered").Len() == 2 })
}
