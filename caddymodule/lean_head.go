package caddymodule

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/textproto"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// leanHead reads the ordinary answer, the one nearly every instance
// sends, without http.ReadResponse's allocations (the response, the
// header map, a string for each value, the body's reader): an HTTP/1.1
// answer to a request other than HEAD, of status 200 to 599 but 204 and
// 304, whose head is wholly in the connection's buffer, every line of it
// ending in CRLF, with at most maxLeanFields fields, one Content-Length
// of digits, no
// Transfer-Encoding, Trailer, Pragma or Connection: close, no folded
// line, and only the bytes net/http takes in its names and values. It
// costs one string (the head's, whose parts the names and values are)
// and one array of values; the response, the header map and the body's
// reader are the connection's, used again by its next answer (the map's
// values move to the client's response, not the map). Any other answer
// is left whole for http.ReadResponse, so that what is read, and what is
// refused, stays net/http's (FuzzLeanHead compares the two).
type leanHead struct {
	res  http.Response
	hdr  http.Header
	body leanFixed
}

// crlf2 ends a head.
var crlf2 = []byte("\r\n\r\n")

// read reads an ordinary answer to r from br; nil and no error: the
// answer is not one (nothing of it read). An error is the one
// http.ReadResponse returns when br has nothing to read.
func (h *leanHead) read(br *bufio.Reader, r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodHead {
		return nil, nil
	}
	if br.Buffered() == 0 {
		if _, err := br.Peek(1); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF // as ReadResponse's first line
			}
			return nil, err
		}
	}
	buf, _ := br.Peek(br.Buffered())
	end := bytes.Index(buf, crlf2)
	if end < 0 || !ordinaryStatus(buf[:end]) {
		return nil, nil
	}
	var fields [maxLeanFields]headField
	n, length, ok := ordinaryFields(buf[:end+2], &fields)
	if !ok {
		return nil, nil
	}
	s := string(buf[:end+2])
	vals := make([]string, n)
	if h.hdr == nil {
		h.hdr = make(http.Header, n)
	} else {
		clear(h.hdr)
	}
	for i, f := range fields[:n] {
		k := s[f.k:f.colon]
		if !f.canon {
			k = textproto.CanonicalMIMEHeaderKey(k)
		}
		v := s[f.v:f.e]
		if prior, ok := h.hdr[k]; ok {
			h.hdr[k] = append(prior, v)
			continue
		}
		vals[i] = v
		h.hdr[k] = vals[i : i+1 : i+1] // capped: an append elsewhere copies
	}
	status, _, _ := strings.Cut(s, "\r\n")
	br.Discard(end + len(crlf2))
	code := int(status[9]-'0')*100 + int(status[10]-'0')*10 + int(status[11]-'0')
	h.res = http.Response{Status: status[9:], StatusCode: code, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h.hdr, ContentLength: length, Request: r}
	if length == 0 {
		h.res.Body = http.NoBody
	} else {
		h.body = leanFixed{br: br, left: length}
		h.res.Body = &h.body
	}
	return &h.res, nil
}

// ordinaryStatus reports whether line, the head from its start, begins
// with an ordinary status line: HTTP/1.1, a status of 200 to 599 but 204
// and 304, a reason or none.
func ordinaryStatus(head []byte) bool {
	if len(head) < 12 || string(head[:9]) != "HTTP/1.1 " || (len(head) > 12 && head[12] != ' ' && head[12] != '\r') {
		return false
	}
	for _, d := range head[9:12] {
		if d < '0' || d > '9' {
			return false
		}
	}
	code := string(head[9:12])
	return code >= "200" && code <= "599" && code != "204" && code != "304"
}

// maxLeanFields is how many header fields an ordinary answer has at
// most.
const maxLeanFields = 32

// headField is where a header field of an ordinary head is: its name
// head[k:colon], its value head[v:e], trimmed; canon says the name is
// in canonical form already.
type headField struct {
	k, colon, v, e int
	canon          bool
}

// tokenBytes are the bytes of a token (a header field's name).
var tokenBytes = func() (t [256]bool) {
	for c := range t {
		t[c] = httpguts.IsTokenRune(rune(c))
	}
	return t
}()

// ordinaryFields finds the header fields of head (the status line and
// the fields, each line ending in CRLF) in one pass: how many there are,
// each in fields, and the Content-Length; ok is false for a head that is
// not ordinary (see leanHead).
func ordinaryFields(head []byte, fields *[maxLeanFields]headField) (n int, length int64, ok bool) {
	i := bytes.IndexByte(head, '\n')
	if i < 1 || head[i-1] != '\r' || bytes.IndexByte(head[:i-1], '\r') >= 0 {
		return 0, 0, false
	}
	i++
	length = -1
	for i < len(head) {
		if n == maxLeanFields {
			return 0, 0, false
		}
		f := headField{k: i, canon: true}
		upper := true
		for ; i < len(head) && head[i] != ':'; i++ {
			c := head[i]
			if !tokenBytes[c] {
				return 0, 0, false // a space, a line break, a folded line
			}
			if upper && 'a' <= c && c <= 'z' || !upper && 'A' <= c && c <= 'Z' {
				f.canon = false
			}
			upper = c == '-'
		}
		if i == f.k || i == len(head) {
			return 0, 0, false
		}
		f.colon = i
		for i++; i < len(head) && head[i] != '\r'; i++ {
			if c := head[i]; (c < ' ' && c != '\t') || c == 0x7f {
				return 0, 0, false
			}
		}
		if i+1 >= len(head) || head[i+1] != '\n' {
			return 0, 0, false
		}
		f.v, f.e = f.colon+1, i
		for f.v < f.e && (head[f.v] == ' ' || head[f.v] == '\t') {
			f.v++
		}
		for f.e > f.v && (head[f.e-1] == ' ' || head[f.e-1] == '\t') {
			f.e--
		}
		i += 2
		name, v := head[f.k:f.colon], head[f.v:f.e]
		switch {
		case fold(name, "Transfer-Encoding"), fold(name, "Trailer"), fold(name, "Pragma"):
			return 0, 0, false
		case fold(name, "Connection"):
			if httpguts.HeaderValuesContainsToken([]string{string(v)}, "close") {
				return 0, 0, false
			}
		case fold(name, "Content-Length"):
			l, ok := digits(v)
			if !ok || length >= 0 {
				return 0, 0, false
			}
			length = l
		}
		fields[n] = f
		n++
	}
	return n, length, length >= 0
}

// fold reports whether name is key, whatever their case (ASCII).
func fold(name []byte, key string) bool {
	return len(name) == len(key) && bytes.EqualFold(name, []byte(key))
}

// digits is b's decimal value, of 1 to 18 digits.
func digits(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	n := int64(0)
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// leanFixed is the body of an ordinary answer, of its Content-Length, as
// net/http reads it: io.EOF with its last bytes, io.ErrUnexpectedEOF
// when the connection ends before them.
type leanFixed struct {
	br   *bufio.Reader
	left int64
	eof  bool
}

func (b *leanFixed) Read(p []byte) (int, error) {
	if b.eof || b.left <= 0 {
		b.eof = true
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.br.Read(p)
	b.left -= int64(n)
	if err == io.EOF {
		b.eof = true
		if b.left > 0 {
			err = io.ErrUnexpectedEOF
		}
	}
	if err == nil && n > 0 && b.left == 0 {
		b.eof, err = true, io.EOF
	}
	return n, err
}

func (b *leanFixed) Close() error { return nil }
