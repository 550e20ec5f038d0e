package routing

// text is what the functions here read: a request's bytes as the fasthttp
// gateway holds them, or a string as net/http gives it to Caddy.
type text interface{ ~string | ~[]byte }

// SplitApp splits the origin-form target "/orders/items/7?x=1" into the
// application's name as the client wrote it ("orders") and the rest
// ("/items/7?x=1"; "?x=1" for "/orders?x=1", "" for "/orders"). Leading
// slashes are skipped. ok is false when the target names no application:
// "/", "/?x=1", or a target that does not start with a slash. Resolve dot
// segments first (RemoveDotSegments).
func SplitApp[T text](target T) (name, rest T, ok bool) {
	i := 0
	for i < len(target) && target[i] == '/' {
		i++
	}
	j := i
	for j < len(target) && target[j] != '/' && target[j] != '?' {
		j++
	}
	if j == i || i == 0 {
		return name, rest, false
	}
	return target[i:j], target[j:], true
}

// HasDotSegment reports whether the path of target (up to its query) has
// a "." or ".." segment, percent-encoded or not. Most targets have none,
// and this tells without a copy.
func HasDotSegment[T text](target T) bool {
	for i := 0; i < len(target); i++ {
		switch target[i] {
		case '?':
			return false
		case '/':
			if dots(segment(target[i+1:])) > 0 {
				return true
			}
		}
	}
	return false
}

// RemoveDotSegments appends target to dst with the dot segments of its
// path resolved (RFC 3986 section 5.2.4: "." is dropped, ".." drops the
// segment before it, and nothing climbs above the root), its query as it
// was. A target that does not start with a slash is appended unchanged.
func RemoveDotSegments[T text](dst []byte, target T) []byte {
	end := len(target)
	for i := 0; i < len(target); i++ {
		if target[i] == '?' {
			end = i
			break
		}
	}
	if end == 0 || target[0] != '/' {
		return append(dst, target...)
	}
	path, query := target[:end], target[end:]
	start := len(dst)
	for i := 0; i < len(path); {
		seg := segment(path[i+1:])
		next := i + 1 + len(seg)
		last := next >= len(path)
		switch dots(seg) {
		case 1:
			if last {
				dst = append(dst, '/')
			}
		case 2:
			for k := len(dst) - 1; k >= start; k-- {
				if dst[k] == '/' {
					dst = dst[:k]
					break
				}
			}
			if last {
				dst = append(dst, '/')
			}
		default:
			dst = append(append(dst, '/'), seg...)
		}
		i = next
	}
	if len(dst) == start {
		dst = append(dst, '/')
	}
	return append(dst, query...)
}

// segment returns p up to its first slash or question mark.
func segment[T text](p T) T {
	for i := 0; i < len(p); i++ {
		if p[i] == '/' || p[i] == '?' {
			return p[:i]
		}
	}
	return p
}

// dots returns 1 for a "." segment, 2 for "..", each dot possibly written
// %2e or %2E, and 0 for any other.
func dots[T text](seg T) int {
	n := 0
	for i := 0; i < len(seg); n++ {
		switch {
		case n == 2:
			return 0
		case seg[i] == '.':
			i++
		case i+2 < len(seg) && seg[i] == '%' && seg[i+1] == '2' && (seg[i+2] == 'e' || seg[i+2] == 'E'):
			i += 3
		default:
			return 0
		}
	}
	return n
}

// CheckTarget returns why a request target may not be forwarded, or ""
// when it may: it has a fragment (a client never sends one: RFC 9112
// section 3.2) or a percent sign not followed by two hex digits. Both are
// read differently by different servers, so nginx refuses them too.
func CheckTarget[T text](target T) string {
	for i := 0; i < len(target); i++ {
		switch target[i] {
		case '#':
			return "the request target has a fragment"
		case '%':
			if i+2 >= len(target) || !isHex(target[i+1]) || !isHex(target[i+2]) {
				return "the request target has a malformed percent escape"
			}
			i += 2
		}
	}
	return ""
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
