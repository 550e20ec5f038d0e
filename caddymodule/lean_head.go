package caddymodule

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/textproto"

	"golang.org/x/net/http/httpguts"
)

// leanHead reads the ordinary answer, the one nearly every instance
// sends, without http.ReadResponse's allocations (the response, the
// header map, a string for each value, the body's reader): an HTTP/1.1
// answer to a request other than HEAD, of status 200 to 599 but 204 and
// 304, whose head is wholly in the connection's buffer, every line of it
// ending in CRLF, with one Content-Length of digits, no
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
	lines, length, ok := ordinaryFields(buf[:end+2])
	if !ok {
		return nil, nil
	}
	s := string(buf[:end+2])
	vals := make([]string, lines)
	if h.hdr == nil {
		h.hdr = make(http.Header, lines)
	} else {
		clear(h.hdr)
	}
	status, rest, _ := cutCRLF(s)
	for i := 0; rest != ""; i++ {
		var line string
		line, rest, _ = cutCRLF(rest)
		colon := indexColon(line)
		k := textproto.CanonicalMIMEHeaderKey(line[:colon])
		v := textproto.TrimString(line[colon+1:])
		if prior, ok := h.hdr[k]; ok {
			h.hdr[k] = append(prior, v)
			continue
		}
		vals[i] = v
		h.hdr[k] = vals[i : i+1 : i+1] // capped: an append elsewhere copies
	}
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

// ordinaryFields reads the header fields of head (the status line and
// the fields, each line ending in CRLF): how many there are, and the
// Content-Length; ok is false for a head that is not ordinary (see
// leanHead).
func ordinaryFields(head []byte) (lines int, length int64, ok bool) {
	i := bytes.Index(head, []byte("\r\n"))
	if bytes.IndexByte(head[:i], '\n') >= 0 || bytes.IndexByte(head[:i], '\r') >= 0 {
		return 0, 0, false
	}
	rest := head[i+2:]
	length = -1
	for len(rest) > 0 {
		i := bytes.Index(rest, []byte("\r\n"))
		line := rest[:i]
		rest = rest[i+2:]
		if len(line) == 0 || line[0] == ' ' || line[0] == '\t' {
			return 0, 0, false
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || !httpguts.ValidHeaderFieldName(string(line[:colon])) {
			return 0, 0, false
		}
		v := line[colon+1:]
		for _, c := range v {
			if (c < ' ' && c != '\t') || c == 0x7f {
				return 0, 0, false
			}
		}
		switch name := line[:colon]; {
		case fold(name, "Transfer-Encoding"), fold(name, "Trailer"), fold(name, "Pragma"):
			return 0, 0, false
		case fold(name, "Connection"):
			if httpguts.HeaderValuesContainsToken([]string{string(v)}, "close") {
				return 0, 0, false
			}
		case fold(name, "Content-Length"):
			n, ok := digits(bytes.Trim(v, " \t"))
			if !ok || length >= 0 {
				return 0, 0, false
			}
			length = n
		}
		lines++
	}
	return lines, length, length >= 0
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

// cutCRLF cuts s at its first CRLF.
func cutCRLF(s string) (line, rest string, ok bool) {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '\r' && s[i+1] == '\n' {
			return s[:i], s[i+2:], true
		}
	}
	return s, "", false
}

// indexColon is where line's first colon is.
func indexColon(line string) int {
	for i := 0; i < len(line); i++ {
		if line[i] == ':' {
			return i
		}
	}
	return -1
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
