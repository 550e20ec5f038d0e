// Package version reports the version of the Eurekagate module that a
// binary was built from, read from the binary's build info, so that the
// standalone server, the Caddy modules and the dashboard show the same
// version without one being written into the code.
package version

import (
	"runtime/debug"
	"sync"
)

// ModulePath is the Eurekagate module's path.
const ModulePath = "github.com/eurekagate/eurekagate"

// String returns the module's version: the main module's when the binary
// is one of ours (go install github.com/eurekagate/eurekagate/cmd/eureka@v1.2.0
// gives v1.2.0), the dependency's when the module is built into another
// binary (xcaddy build --with github.com/eurekagate/eurekagate); a commit
// without a tag reads as Go's pseudo-version. A build from a working tree,
// which Go marks (devel), is "devel", followed by the commit and "-dirty"
// when Go stamped them (go build with -buildvcs).
var String = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return fromBuildInfo(bi)
})

// fromBuildInfo finds the module's version in bi.
func fromBuildInfo(bi *debug.BuildInfo) string {
	v := ""
	if bi.Main.Path == ModulePath {
		v = bi.Main.Version
	}
	for _, dep := range bi.Deps {
		if dep.Path == ModulePath {
			v = dep.Version
			if dep.Replace != nil && dep.Replace.Version != "" {
				v = dep.Replace.Version
			}
		}
	}
	if v != "" && v != "(devel)" {
		return v
	}
	out := "devel"
	var modified bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if len(s.Value) > 12 {
				s.Value = s.Value[:12]
			}
			out += "-" + s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if modified {
		out += "-dirty"
	}
	return out
}
