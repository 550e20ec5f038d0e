package testkit

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/proc"
)

// A Redis is a redis-server of the test's own, on a loopback port, with
// nothing saved to disk.
type Redis struct {
	t    testing.TB
	bin  string
	Port int
	p    *proc.Process
}

// StartRedis starts Debian's redis-server on a free loopback port; the
// test is skipped when it is not installed, and fails under CI=true
// (.ci/run installs it). It is stopped when the test ends.
func StartRedis(t testing.TB) *Redis {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server is not installed (apt-get install redis-server)")
		}
		t.Skip("redis-server is not installed (apt-get install redis-server); CI=true fails instead")
	}
	r := &Redis{t: t, bin: bin, Port: FreePort(t)}
	r.Start()
	return r
}

// URL is the server's address as -gateway-redis takes it.
func (r *Redis) URL() string { return "redis://127.0.0.1:" + strconv.Itoa(r.Port) }

// Start starts the server (again, after Kill) on its port, and waits
// until it accepts connections.
func (r *Redis) Start() {
	r.t.Helper()
	r.p = StartProcess(r.t, context.Background(), "redis-server", proc.Config{}, os.Kill, 0, r.bin,
		"--port", strconv.Itoa(r.Port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	AwaitLine(r.t, r.p, `Ready to accept connections`, 20*time.Second)
}

// Kill kills the server at once, as a crash would, and waits for it to
// be gone.
func (r *Redis) Kill() {
	r.p.Stop(os.Kill, 0)
}
