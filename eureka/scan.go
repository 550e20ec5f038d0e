package eureka

// What the JSON and the XML scanner share: their white space (the same
// four bytes in both grammars) and the test that finds, eight bytes at a
// time, where the plain run of a string or a text ends.

// skipSpace returns the position of the first byte from pos on that is not
// a space, tab, line feed or carriage return, and that byte (0 at the end).
func skipSpace(data []byte, pos int) (int, byte) {
	for pos < len(data) {
		switch c := data[pos]; c {
		case ' ', '\t', '\n', '\r':
			pos++
		default:
			return pos, c
		}
	}
	return pos, 0
}

// Eight bytes at a time: the high bit of each byte of the result is set
// for the bytes that are not plain ASCII string content (and possibly for
// bytes after one that is).
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

func hasZero(x uint64) uint64 { return (x - lsb) & ^x & msb }

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
