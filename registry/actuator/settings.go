package actuator

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// errRootBasePath is BasePath's refusal of "/".
var errRootBasePath = errors.New("the endpoints would stand beside the registry's own /health; give a path such as " + DefaultBasePath)

// BasePath is the check of a base path (management.endpoints.web.
// base-path) that every front door applies: the path gets one leading
// slash and no trailing one; "/" (or "", which Config alone takes for
// DefaultBasePath) is refused, since the endpoints would stand beside
// the registry's /health. Config,
// cmd/eureka's -actuator-path and Caddy's eureka_actuator all go through
// it.
func BasePath(p string) (string, error) {
	p = "/" + strings.Trim(p, "/")
	if p == "/" {
		return "", errRootBasePath
	}
	return p, nil
}

// Exposed returns the endpoints one name of an exposure list
// (management.endpoints.web.exposure.include) stands for: all of
// Endpoints for *, the name itself when it is served here; otherwise an
// error naming the ones served. Config, cmd/eureka's -actuator and the
// Spring mapping (internal/springeureka) all go through it.
func Exposed(name string) ([]string, error) {
	switch {
	case name == "*":
		return Endpoints, nil
	case slices.Contains(Endpoints, name):
		return []string{name}, nil
	}
	return nil, fmt.Errorf("endpoint %q: not served here (%s, or *)", name, strings.Join(Endpoints, ", "))
}
