package eureka

import (
	"encoding/json"
	"reflect"
	"strconv"
	"testing"
)

// batchItem is a peer replication batch item, as registry reads it.
type batchItem struct {
	AppName, ID, Status, OverriddenStatus, Action string
	LastDirtyTimestamp                            int64
	Instance                                      *InstanceInfo
}

// readBatch reads {"replicationList":[...]} with a JSONReader, the way a
// batch decoder can adopt it.
func readBatch(data []byte) ([]batchItem, error) {
	var items []batchItem
	r := NewJSONReader(data)
	err := r.Object(func(key []byte) error {
		if !KeyIs(key, "replicationList") {
			return r.Skip()
		}
		if r.Null() {
			return nil
		}
		return r.Array(func() error {
			var it batchItem
			err := r.Object(func(key []byte) error {
				if r.Null() {
					return nil
				}
				var err error
				switch {
				case KeyIs(key, "appName"):
					it.AppName, err = r.String()
				case KeyIs(key, "id"):
					it.ID, err = r.String()
				case KeyIs(key, "status"):
					it.Status, err = r.String()
				case KeyIs(key, "overriddenStatus"):
					it.OverriddenStatus, err = r.String()
				case KeyIs(key, "action"):
					it.Action, err = r.String()
				case KeyIs(key, "lastDirtyTimestamp"):
					var s string
					if s, err = r.Number(); err == nil {
						it.LastDirtyTimestamp, err = strconv.ParseInt(s, 10, 64)
					}
				case KeyIs(key, "instanceInfo"):
					it.Instance, err = r.Instance()
				default:
					err = r.Skip()
				}
				return err
			})
			items = append(items, it)
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	return items, r.End()
}

// decodeBatchStd is the same with encoding/json and DecodeInstanceJSON, as
// registry.DecodeReplicationBatch does it today.
func decodeBatchStd(data []byte) ([]batchItem, error) {
	var doc struct {
		ReplicationList []struct {
			AppName, ID, Status, OverriddenStatus, Action string
			LastDirtyTimestamp                            int64
			InstanceInfo                                  json.RawMessage
		}
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	var items []batchItem
	for _, w := range doc.ReplicationList {
		it := batchItem{w.AppName, w.ID, w.Status, w.OverriddenStatus, w.Action, w.LastDirtyTimestamp, nil}
		if len(w.InstanceInfo) > 0 && string(w.InstanceInfo) != "null" {
			i, err := DecodeInstanceJSON(w.InstanceInfo)
			if err != nil {
				return nil, err
			}
			it.Instance = i
		}
		items = append(items, it)
	}
	return items, nil
}

func TestJSONReaderReplicationBatch(t *testing.T) {
	doc := []byte(`{"replicationList":[
		{"appName":"ORDERS","id":"h1:orders:8080","lastDirtyTimestamp":1718000000050,"status":"UP",
		 "instanceInfo":` + string(AppendInstanceJSONBody(nil, sampleInstance())) + `,"action":"Register"},
		{"appName":"ORDERS","id":"h1:orders:8080","overriddenStatus":"OUT_OF_SERVICE","status":"OUT_OF_SERVICE","action":"Heartbeat"},
		{"appName":"ORDERS","id":"h2:orders:8080","instanceInfo":null,"action":"Cancel","extra":{"a":[1,2]}}
	], "other": true}`)
	got, err := readBatch(doc)
	if err != nil {
		t.Fatal(err)
	}
	want, err := decodeBatchStd(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if got[0].Instance == nil || got[0].Instance.ID() != sampleInstance().ID() {
		t.Fatalf("instance: %+v", got[0].Instance)
	}
	for _, bad := range []string{`{"replicationList":[{"instanceInfo":[]}]}`, `{"replicationList":[}`, `{} x`} {
		if _, err := readBatch([]byte(bad)); err != ErrCannotParse {
			t.Errorf("readBatch(%s) = %v, want ErrCannotParse", bad, err)
		}
	}
}
