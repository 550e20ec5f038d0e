package version

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"our binary, installed at a tag", debug.BuildInfo{Main: debug.Module{Path: ModulePath, Version: "v1.2.0"}}, "v1.2.0"},
		{"built into Caddy by xcaddy", debug.BuildInfo{Main: debug.Module{Path: "caddy", Version: "(devel)"},
			Deps: []*debug.Module{{Path: "github.com/caddyserver/caddy/v2", Version: "v2.11.9"}, {Path: ModulePath, Version: "v0.0.0-20260101000000-0123456789ab"}}},
			"v0.0.0-20260101000000-0123456789ab"},
		{"xcaddy with a local replacement", debug.BuildInfo{Main: debug.Module{Path: "caddy"},
			Deps: []*debug.Module{{Path: ModulePath, Version: "(devel)", Replace: &debug.Module{Path: "../eurekagate"}}}}, "devel"},
		{"a working tree with VCS stamping", debug.BuildInfo{Main: debug.Module{Path: ModulePath, Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.modified", Value: "true"}}},
			"devel-0123456789ab-dirty"},
		{"a working tree", debug.BuildInfo{Main: debug.Module{Path: ModulePath, Version: "(devel)"}}, "devel"},
	} {
		if got := fromBuildInfo(&tc.bi); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
