package gatewaysuite

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A minimal WebSocket (RFC 6455): the handshake, and unfragmented data
// frames, enough to echo messages through a gateway.

const wsGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

func wsAccept(key string) string {
	h := sha1.Sum([]byte(key + wsGUID))
	return base64.StdEncoding.EncodeToString(h[:])
}

// wsEcho is an instance that accepts WebSocket connections on /ws and
// sends each message back, until the client sends a close frame.
func wsEcho(t *testing.T) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/ws" || !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") ||
			!strings.Contains(strings.ToLower(r.Header.Get("Connection")), "upgrade") {
			http.Error(w, fmt.Sprintf("not a websocket handshake on %s: %v", r.URL.Path, r.Header), 400)
			return
		}
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(20 * time.Second))
		fmt.Fprintf(rw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
			wsAccept(r.Header.Get("Sec-WebSocket-Key")))
		rw.Flush()
		for {
			op, msg, err := wsRead(rw.Reader)
			if err != nil || op == 8 {
				wsWrite(rw.Writer, 8, nil, false)
				rw.Flush()
				return
			}
			wsWrite(rw.Writer, op, msg, false)
			rw.Flush()
		}
	})
}

// wsRoundTrip opens a WebSocket at path through the gateway at hostport,
// sends each message and checks that it comes back, then closes.
func wsRoundTrip(t *testing.T, hostport, path string, messages []string) {
	t.Helper()
	wsRoundTripPausing(t, hostport, path, messages, 0)
}

// wsRoundTripPausing is wsRoundTrip with both sides silent for pause
// before each message after the first.
func wsRoundTripPausing(t *testing.T, hostport, path string, messages []string, pause time.Duration) {
	t.Helper()
	conn := dialDeadline(t, hostport, 20*time.Second)
	defer conn.Close()
	keyBytes := make([]byte, 16)
	rand.Read(keyBytes)
	key := base64.StdEncoding.EncodeToString(keyBytes)
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n", path, hostport, key)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 101 || resp.Header.Get("Sec-WebSocket-Accept") != wsAccept(key) ||
		!strings.EqualFold(resp.Header.Get("Upgrade"), "websocket") {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		t.Fatalf("handshake: %d %v %q", resp.StatusCode, resp.Header, body)
	}
	bw := bufio.NewWriter(conn)
	for n, m := range messages {
		if n > 0 {
			time.Sleep(pause) // the silence itself is what is tested
		}
		wsWrite(bw, 1, []byte(m), true)
		if err := bw.Flush(); err != nil {
			t.Fatal(err)
		}
		op, got, err := wsRead(br)
		if err != nil {
			t.Fatal(err)
		}
		if op != 1 || string(got) != m {
			t.Fatalf("echo of a %d-byte message: opcode %d, %d bytes", len(m), op, len(got))
		}
	}
	wsWrite(bw, 8, nil, true)
	bw.Flush()
	if op, _, err := wsRead(br); err != nil || op != 8 {
		t.Fatalf("close: opcode %d, %v", op, err)
	}
}

// wsWrite writes one final frame; a client masks it.
func wsWrite(w *bufio.Writer, op byte, payload []byte, mask bool) {
	w.WriteByte(0x80 | op)
	m := byte(0)
	if mask {
		m = 0x80
	}
	switch n := len(payload); {
	case n < 126:
		w.WriteByte(m | byte(n))
	case n < 1<<16:
		w.WriteByte(m | 126)
		binary.Write(w, binary.BigEndian, uint16(n))
	default:
		w.WriteByte(m | 127)
		binary.Write(w, binary.BigEndian, uint64(n))
	}
	if !mask {
		w.Write(payload)
		return
	}
	var key [4]byte
	rand.Read(key[:])
	w.Write(key[:])
	masked := bytes.Clone(payload)
	for i := range masked {
		masked[i] ^= key[i%4]
	}
	w.Write(masked)
}

// wsRead reads one unfragmented frame and unmasks it.
func wsRead(r *bufio.Reader) (op byte, payload []byte, err error) {
	var h [2]byte
	if _, err = io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	op = h[0] & 0x0f
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var l uint16
		err = binary.Read(r, binary.BigEndian, &l)
		n = uint64(l)
	case 127:
		err = binary.Read(r, binary.BigEndian, &n)
	}
	if err != nil {
		return 0, nil, err
	}
	if n > 1<<24 {
		return 0, nil, fmt.Errorf("frame of %d bytes", n)
	}
	var key [4]byte
	masked := h[1]&0x80 != 0
	if masked {
		if _, err = io.ReadFull(r, key[:]); err != nil {
			return 0, nil, err
		}
	}
	payload = make([]byte, n)
	if _, err = io.ReadFull(r, payload); err != nil {
		return 0, nil, err
	}
	if masked {
		for i := range payload {
			payload[i] ^= key[i%4]
		}
	}
	return op, payload, nil
}
