package eureka

// AppName returns the name under which Eureka stores the application a
// request names: name in ASCII upper case. Other bytes stay as they are,
// so that no Unicode case mapping (a dotless i, a long s) turns one name
// into another.
func AppName[T ~string | ~[]byte](name T) string {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c >= 'a' && c <= 'z' {
			b := make([]byte, len(name))
			copy(b, name)
			for j := i; j < len(b); j++ {
				if c := b[j]; c >= 'a' && c <= 'z' {
					b[j] = c - ('a' - 'A')
				}
			}
			return string(b)
		}
	}
	return string(name)
}
