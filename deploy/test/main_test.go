package deploytest

import (
	"os"
	"testing"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// builds are the binaries the chart's configuration is run with, built
// as deploy/images/build builds them (static, paths trimmed), so that
// the two share Go's build cache.
var builds = &testkit.GoBuilds{Prefix: "deploytest"}

func TestMain(m *testing.M) {
	os.Setenv("CGO_ENABLED", "0")
	os.Setenv("GOFLAGS", os.Getenv("GOFLAGS")+" -trimpath")
	code := m.Run()
	builds.Remove()
	os.Exit(code)
}
