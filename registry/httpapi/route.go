package httpapi

import (
	"net/url"
	"strings"
)

// endpoint names a REST resource of the Eureka API.
type endpoint uint8

const (
	epNone             endpoint = iota
	epApps                      // apps
	epDelta                     // apps/delta
	epApp                       // apps/{app}
	epInstance                  // apps/{app}/{id}
	epInstanceStatus            // apps/{app}/{id}/status
	epInstanceMetadata          // apps/{app}/{id}/metadata
	epInstanceByID              // instances/{id}
	epVIP                       // vips/{vip}
	epSVIP                      // svips/{svip}
	epBatch                     // peerreplication/batch
	epStatus                    // status
	epStatusOverrides           // serverinfo/statusoverrides
)

// isRead reports whether the endpoint reads the registry (for GET).
func (e endpoint) isRead() bool {
	switch e {
	case epApps, epDelta, epApp, epInstance, epInstanceByID, epVIP, epSVIP:
		return true
	}
	return false
}

// allows reports whether the endpoint answers method; the others get 405.
func (e endpoint) allows(method string) bool {
	switch method {
	case "GET", "HEAD":
		switch e {
		case epInstanceStatus, epInstanceMetadata, epBatch:
			return false
		}
		return true
	case "POST":
		return e == epApp || e == epBatch
	case "PUT":
		return e == epInstance || e == epInstanceStatus || e == epInstanceMetadata
	case "DELETE":
		return e == epInstance || e == epInstanceStatus
	}
	return false
}

// route is a parsed request path.
type route struct {
	ep       endpoint
	app, id  string // app is upper-cased
	name     string // VIP or instance id for the lookup endpoints
	segments [10]string
}

// underPrefix reports whether path starts with one of prefixes.
func underPrefix(path string, prefixes [][]string, r *route) bool {
	segs, ok := splitPath(path, r)
	if !ok {
		return false
	}
	for _, prefix := range prefixes {
		if _, ok := cutPrefix(segs, prefix); ok {
			return true
		}
	}
	return false
}

// parseRoute matches path against "{prefix}[/{version}]/{resource}...". A
// prefix is one of prefixes (each like "/eureka"; "" for the root). Empty
// segments are skipped, so trailing and doubled slashes are tolerated, and
// each segment is URL-decoded. It reports false for any other path.
func parseRoute(path string, prefixes [][]string, r *route) bool {
	segs, ok := splitPath(path, r)
	if !ok {
		return false
	}
	for _, prefix := range prefixes {
		if rest, ok := cutPrefix(segs, prefix); ok && r.match(rest) {
			return true
		}
	}
	return false
}

// splitPath splits path into its non-empty, URL-decoded segments, in r's
// storage. It reports false for a bad escape or a path longer than any API
// path.
func splitPath(path string, r *route) ([]string, bool) {
	segs := r.segments[:0]
	for path != "" {
		var seg string
		seg, path, _ = strings.Cut(path, "/")
		if seg == "" {
			continue
		}
		if len(segs) == len(r.segments) {
			return nil, false // longer than any API path
		}
		if strings.IndexByte(seg, '%') >= 0 {
			dec, err := url.PathUnescape(seg)
			if err != nil {
				return nil, false
			}
			seg = dec
		}
		segs = append(segs, seg)
	}
	return segs, true
}

// malformedEscape answers a path with a bad percent-escape.
const malformedEscape = "malformed percent-escape in the request path"

// validEscapes reports whether every % in path starts a two-digit hex
// escape.
func validEscapes(path string) bool {
	for n := 0; n < len(path); n++ {
		if path[n] == '%' {
			if n+2 >= len(path) || !isHex(path[n+1]) || !isHex(path[n+2]) {
				return false
			}
			n += 2
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func cutPrefix(segs, prefix []string) ([]string, bool) {
	if len(segs) < len(prefix) {
		return nil, false
	}
	for n, p := range prefix {
		if segs[n] != p {
			return nil, false
		}
	}
	return segs[len(prefix):], true
}

// match matches the resource part, after an optional version segment.
func (r *route) match(s []string) bool {
	if len(s) > 0 && !isResource(s[0]) {
		s = s[1:] // the {version} segment: any value, as in Jersey
	}
	if len(s) == 0 {
		return false
	}
	switch s[0] {
	case "apps":
		switch len(s) {
		case 1:
			r.ep = epApps
		case 2:
			if s[1] == "delta" {
				r.ep = epDelta
			} else {
				r.ep, r.app = epApp, strings.ToUpper(s[1])
			}
		case 3:
			r.ep, r.app, r.id = epInstance, strings.ToUpper(s[1]), s[2]
		case 4:
			r.app, r.id = strings.ToUpper(s[1]), s[2]
			switch s[3] {
			case "status":
				r.ep = epInstanceStatus
			case "metadata":
				r.ep = epInstanceMetadata
			default:
				return false
			}
		default:
			return false
		}
	case "instances", "vips", "svips":
		if len(s) != 2 {
			return false
		}
		r.name = s[1]
		switch s[0] {
		case "instances":
			r.ep = epInstanceByID
		case "vips":
			r.ep = epVIP
		default:
			r.ep = epSVIP
		}
	case "peerreplication":
		if len(s) != 2 || s[1] != "batch" {
			return false
		}
		r.ep = epBatch
	case "status":
		if len(s) != 1 {
			return false
		}
		r.ep = epStatus
	case "serverinfo":
		if len(s) != 2 || s[1] != "statusoverrides" {
			return false
		}
		r.ep = epStatusOverrides
	default:
		return false
	}
	return true
}

func isResource(s string) bool {
	switch s {
	case "apps", "instances", "vips", "svips", "peerreplication", "status", "serverinfo":
		return true
	}
	return false
}

// splitPrefix turns "/eureka/" into ["eureka"].
func splitPrefix(p string) []string {
	var out []string
	for _, seg := range strings.Split(p, "/") {
		if seg != "" {
			out = append(out, seg)
		}
	}
	return out
}
