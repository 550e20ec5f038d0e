package caddymodule

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"testing"
)

// ordinaryAnswers are answers leanHead reads itself, their names
// canonical (another name costs its canonical string, a repeated one its
// values' slice).
var ordinaryAnswers = []string{
	"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n",
	"HTTP/1.1 404\r\nContent-Length:  3 \r\nX-A: 1\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\nnoHTTP/1.1 200 OK\r\n",
	"HTTP/1.1 503 Service Unavailable\r\nX-A:\t1 \r\nRetry-After: 1\r\nContent-Length: 10\r\n\r\nshort",
	"HTTP/1.1 302 Found\r\nLocation: /x\r\nContent-Length: 0\r\nSet-Cookie: a=\x80b\r\n\r\n",
}

// leanHead reads the ordinary answers as http.ReadResponse does, with
// two allocations (the head's string and its values), and leaves the
// others to it.
func TestLeanHeadReadsOrdinaryAnswers(t *testing.T) {
	req := &http.Request{Method: "GET"}
	for _, raw := range ordinaryAnswers {
		var h leanHead
		if res, err := h.read(bufio.NewReader(bytes.NewReader([]byte(raw))), req); res == nil || err != nil {
			t.Errorf("%q: not read: %v", raw, err)
		}
		src := bytes.NewReader([]byte(raw))
		br := bufio.NewReader(src)
		allocs := testing.AllocsPerRun(100, func() {
			src.Seek(0, io.SeekStart)
			br.Reset(src)
			h.read(br, req)
		})
		if allocs > 2 {
			t.Errorf("%q: %v allocations", raw, allocs)
		}
	}
	for _, c := range framingCases {
		var h leanHead
		if res, _ := h.read(bufio.NewReader(bytes.NewReader([]byte(c.answer))), &http.Request{Method: c.method}); res != nil && c.name != "two-answers" && c.name != "short-then-close" {
			t.Errorf("%s: read by leanHead", c.name)
		}
	}
}

// FuzzLeanHead: whatever the bytes, the request's method and the pieces
// the connection delivers them in, the lean client reads the same
// answers in turn as http.ReadResponse (status, headers, framing, body,
// what is left on the connection), or fails where it fails. The seeds
// are the framing table's answers and ordinary ones, whole, split and
// two in a row; go test -fuzz FuzzLeanHead explores.
func FuzzLeanHead(f *testing.F) {
	for _, c := range framingCases {
		f.Add([]byte(c.answer), uint8(0), uint16(leanBufferSize))
	}
	for _, a := range ordinaryAnswers {
		f.Add([]byte(a), uint8(0), uint16(leanBufferSize))
		f.Add([]byte(a), uint8(0), uint16(7))   // the head split across reads
		f.Add([]byte(a+a), uint8(1), uint16(4)) // two answers on the connection, to HEAD
	}
	f.Add([]byte("HTTP/1.1 200 OK\r\nx-a: 1\r\nX-A: 2\r\ncontent-LENGTH: 1\r\nconnection: Close\r\n\r\nx"), uint8(0), uint16(leanBufferSize))
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\nPragma: no-cache\r\n\r\nx"), uint8(0), uint16(leanBufferSize))
	f.Add([]byte("HTTP/1.1 200 OK\r\nX: a\nContent-Length: 1\r\n folded\r\n\r\nx"), uint8(0), uint16(leanBufferSize))
	methods := []string{"GET", "HEAD", "POST", "CONNECT", "OPTIONS"}
	f.Fuzz(func(t *testing.T, raw []byte, method uint8, chunk uint16) {
		req := &http.Request{Method: methods[int(method)%len(methods)]}
		reads := max(int(chunk), 1)
		br := bufio.NewReaderSize(&piecesReader{raw, reads}, leanBufferSize)
		wbr := bufio.NewReaderSize(&piecesReader{raw, reads}, leanBufferSize)
		var h leanHead
		for answer := range 3 { // the answers a kept connection carries in turn
			want, werr := http.ReadResponse(wbr, req)
			got, err := h.read(br, req)
			if got == nil && err == nil {
				got, err = http.ReadResponse(br, req) // left whole for it
			}
			if (err != nil) != (werr != nil) {
				t.Fatalf("%s, answer %d of %q: error %v, http.ReadResponse's %v", req.Method, answer, raw, err, werr)
			}
			if err != nil {
				return
			}
			if got.Status != want.Status || got.StatusCode != want.StatusCode || got.Proto != want.Proto ||
				got.ProtoMajor != want.ProtoMajor || got.ProtoMinor != want.ProtoMinor ||
				got.ContentLength != want.ContentLength || got.Close != want.Close ||
				!reflect.DeepEqual(got.Header, want.Header) || !reflect.DeepEqual(got.Trailer, want.Trailer) ||
				!reflect.DeepEqual(got.TransferEncoding, want.TransferEncoding) {
				t.Fatalf("%s, answer %d of %q:\n got %+v\nwant %+v", req.Method, answer, raw, got, want)
			}
			body, berr := io.ReadAll(got.Body)
			wbody, wberr := io.ReadAll(want.Body)
			if !bytes.Equal(body, wbody) || fmt.Sprint(berr) != fmt.Sprint(wberr) {
				t.Fatalf("%s, answer %d of %q: body %q %v, http.ReadResponse's %q %v", req.Method, answer, raw, body, berr, wbody, wberr)
			}
			if want.Close || berr != nil {
				break
			}
		}
		left, _ := io.ReadAll(br)
		wleft, _ := io.ReadAll(wbr)
		if !bytes.Equal(left, wleft) {
			t.Fatalf("%s, %q: %q left, http.ReadResponse leaves %q", req.Method, raw, left, wleft)
		}
	})
}

// piecesReader reads its bytes at most n at a time, as a connection
// delivers a head in pieces.
type piecesReader struct {
	b []byte
	n int
}

func (r *piecesReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.n)], r.b)
	r.b = r.b[n:]
	return n, nil
}
