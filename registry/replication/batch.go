package replication

import (
	"strconv"

	"github.com/eurekagate/eurekagate/eureka"
)

// Replication actions, as Java peers name them in a batch.
const (
	ActionRegister             = "Register"
	ActionHeartbeat            = "Heartbeat"
	ActionCancel               = "Cancel"
	ActionStatusUpdate         = "StatusUpdate"
	ActionDeleteStatusOverride = "DeleteStatusOverride"
)

// Item is one entry of a peer replication batch
// (POST peerreplication/batch), in the Java peers' JSON shape.
type Item struct {
	AppName            string
	ID                 string
	LastDirtyTimestamp int64 // 0 when absent
	Status             string
	OverriddenStatus   string
	Instance           *eureka.InstanceInfo
	Action             string
}

// Result is the answer to one Item.
type Result struct {
	StatusCode int
	Instance   *eureka.InstanceInfo // the receiver's copy on a 409
}

// DecodeBatch reads {"replicationList":[...]}. It reads the document in
// one pass with eureka.JSONReader, instances included, and accepts what
// encoding/json's Unmarshal into the Java item shape accepted (keys in any
// case, null for an absent field, unknown keys skipped) and nothing else
// (the differential fuzz target holds it to that).
func DecodeBatch(data []byte) ([]Item, error) {
	var list []batchEntry
	n, err := readDocument(data, "replicationList", &list, (*batchEntry).read)
	if err != nil {
		return nil, eureka.ErrCannotParse
	}
	items := make([]Item, n)
	for k, e := range list[:n] {
		if e.badInstance {
			return nil, eureka.ErrCannotParse
		}
		if e.lastDirty != "" {
			ts, err := strconv.ParseInt(e.lastDirty, 10, 64)
			if err != nil {
				return nil, eureka.ErrCannotParse
			}
			e.LastDirtyTimestamp = ts
		}
		items[k] = e.Item
	}
	return items, nil
}

// batchEntry is an Item as read. As with encoding/json, which kept the
// number as a json.Number and the instance as a json.RawMessage until the
// end, a lastDirtyTimestamp that is not an int64 and an instanceInfo that
// is not an instance fail the batch only if no later key replaces them.
type batchEntry struct {
	Item
	lastDirty   string
	badInstance bool
}

func (e *batchEntry) read(r *eureka.JSONReader) error {
	return r.Object(func(key []byte) error {
		if eureka.KeyIs(key, "instanceInfo") {
			return readInstance(r, &e.Instance, &e.badInstance)
		}
		if r.Null() {
			return nil // leaves the field as it is
		}
		var err error
		switch {
		case eureka.KeyIs(key, "appName"):
			e.AppName, err = r.String()
		case eureka.KeyIs(key, "id"):
			e.ID, err = r.String()
		case eureka.KeyIs(key, "lastDirtyTimestamp"):
			e.lastDirty, err = readNumber(r)
		case eureka.KeyIs(key, "status"):
			e.Status, err = r.String()
		case eureka.KeyIs(key, "overriddenStatus"):
			e.OverriddenStatus, err = r.String()
		case eureka.KeyIs(key, "action"):
			e.Action, err = r.String()
		default:
			err = r.Skip()
		}
		return err
	})
}

// AppendBatch writes {"replicationList":[...]} as a Java peer
// does: null fields omitted, instanceInfo as an unwrapped legacy
// InstanceInfo.
func AppendBatch(b []byte, items []Item) []byte {
	b = append(b, `{"replicationList":[`...)
	for n, it := range items {
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"appName":`...)
		b = eureka.AppendJSONString(b, it.AppName)
		b = append(b, `,"id":`...)
		b = eureka.AppendJSONString(b, it.ID)
		if it.LastDirtyTimestamp != 0 {
			b = append(b, `,"lastDirtyTimestamp":`...)
			b = strconv.AppendInt(b, it.LastDirtyTimestamp, 10)
		}
		if it.OverriddenStatus != "" {
			b = append(b, `,"overriddenStatus":`...)
			b = eureka.AppendJSONString(b, it.OverriddenStatus)
		}
		if it.Status != "" {
			b = append(b, `,"status":`...)
			b = eureka.AppendJSONString(b, it.Status)
		}
		if it.Instance != nil {
			b = append(b, `,"instanceInfo":`...)
			b = eureka.AppendInstanceJSONBody(b, it.Instance)
		}
		b = append(b, `,"action":`...)
		b = eureka.AppendJSONString(b, it.Action)
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// AppendResults writes {"responseList":[...]}.
func AppendResults(b []byte, results []Result) []byte {
	b = append(b, `{"responseList":[`...)
	for n, r := range results {
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"statusCode":`...)
		b = strconv.AppendInt(b, int64(r.StatusCode), 10)
		if r.Instance != nil {
			b = append(b, `,"responseEntity":`...)
			b = eureka.AppendInstanceJSONBody(b, r.Instance)
		}
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// DecodeResults reads {"responseList":[...]}, as DecodeBatch reads a batch.
func DecodeResults(data []byte) ([]Result, error) {
	var list []resultEntry
	n, err := readDocument(data, "responseList", &list, (*resultEntry).read)
	if err != nil {
		return nil, eureka.ErrCannotParse
	}
	out := make([]Result, n)
	for k, e := range list[:n] {
		if e.badInstance {
			return nil, eureka.ErrCannotParse
		}
		out[k] = e.Result
	}
	return out, nil
}

// resultEntry is a Result as read (see batchEntry).
type resultEntry struct {
	Result
	badInstance bool
}

func (e *resultEntry) read(r *eureka.JSONReader) error {
	return r.Object(func(key []byte) error {
		switch {
		case eureka.KeyIs(key, "responseEntity"):
			return readInstance(r, &e.Instance, &e.badInstance)
		case !eureka.KeyIs(key, "statusCode"):
			return r.Skip()
		case r.Null():
			return nil
		}
		text, err := r.Number()
		if err != nil {
			return err
		}
		code, err := strconv.ParseInt(text, 10, 64)
		e.StatusCode = int(code)
		return err
	})
}

// readDocument reads {"<name>":[...]} (or null, which has no entries)
// into list with read, and returns the number of entries. As
// encoding/json reads an array into a slice, a repeated name replaces the
// list, but an entry is read into what an earlier array of the name left
// at its place, if one reached that far; null and [] drop those.
func readDocument[T any](data []byte, name string, list *[]T, read func(*T, *eureka.JSONReader) error) (int, error) {
	r := eureka.NewJSONReader(data)
	n := 0
	if !r.Null() {
		err := r.Object(func(key []byte) error {
			if !eureka.KeyIs(key, name) {
				return r.Skip()
			}
			n = 0
			if r.Null() {
				*list = nil
				return nil
			}
			err := r.Array(func() error {
				if n == len(*list) {
					*list = append(*list, *new(T))
				}
				n++
				if r.Null() {
					return nil // leaves the entry as it is
				}
				return read(&(*list)[n-1], r)
			})
			if n == 0 {
				*list = nil
			}
			return err
		})
		if err != nil {
			return 0, err
		}
	}
	return n, r.End()
}

// readInstance reads an embedded InstanceInfo into *dst: null is none,
// and JSON that is not an instance is recorded in *bad.
func readInstance(r *eureka.JSONReader, dst **eureka.InstanceInfo, bad *bool) error {
	*dst, *bad = nil, false
	if r.Null() {
		return nil
	}
	i, err := r.Instance()
	switch {
	case err == eureka.ErrNotInstance:
		*bad = true
	case err != nil:
		return err
	}
	*dst = i
	return nil
}

// readNumber reads a number, or a string holding one, as encoding/json
// reads a json.Number.
func readNumber(r *eureka.JSONReader) (string, error) {
	if r.Kind() != '"' {
		return r.Number()
	}
	s, err := r.String()
	if err != nil {
		return "", err
	}
	if text, err := eureka.NewJSONReader([]byte(s)).Number(); err != nil || text != s {
		return "", eureka.ErrCannotParse
	}
	return s, nil
}
