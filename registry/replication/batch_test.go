package replication

import (
	"encoding/json"
	"os"
	"reflect"
	"strconv"
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
)

// The batch decoders as they were before they read with eureka.JSONReader
// (encoding/json with json.RawMessage for the instances), kept as the
// reference of the differential fuzz target.

type legacyWireItem struct {
	AppName            string          `json:"appName"`
	ID                 string          `json:"id"`
	LastDirtyTimestamp json.Number     `json:"lastDirtyTimestamp,omitempty"`
	Status             string          `json:"status,omitempty"`
	OverriddenStatus   string          `json:"overriddenStatus,omitempty"`
	InstanceInfo       json.RawMessage `json:"instanceInfo,omitempty"`
	Action             string          `json:"action"`
}

func legacyDecodeBatch(data []byte) ([]Item, error) {
	var doc struct {
		ReplicationList []legacyWireItem `json:"replicationList"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, eureka.ErrCannotParse
	}
	items := make([]Item, len(doc.ReplicationList))
	for n, w := range doc.ReplicationList {
		it := Item{AppName: w.AppName, ID: w.ID, Status: w.Status, OverriddenStatus: w.OverriddenStatus, Action: w.Action}
		if w.LastDirtyTimestamp != "" {
			ts, err := strconv.ParseInt(string(w.LastDirtyTimestamp), 10, 64)
			if err != nil {
				return nil, eureka.ErrCannotParse
			}
			it.LastDirtyTimestamp = ts
		}
		if len(w.InstanceInfo) > 0 && string(w.InstanceInfo) != "null" {
			inst, err := eureka.DecodeInstanceJSON(w.InstanceInfo)
			if err != nil {
				return nil, err
			}
			it.Instance = inst
		}
		items[n] = it
	}
	return items, nil
}

func legacyDecodeResults(data []byte) ([]Result, error) {
	var doc struct {
		ResponseList []struct {
			StatusCode     int             `json:"statusCode"`
			ResponseEntity json.RawMessage `json:"responseEntity"`
		} `json:"responseList"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, eureka.ErrCannotParse
	}
	out := make([]Result, len(doc.ResponseList))
	for n, r := range doc.ResponseList {
		out[n].StatusCode = r.StatusCode
		if len(r.ResponseEntity) > 0 && string(r.ResponseEntity) != "null" {
			inst, err := eureka.DecodeInstanceJSON(r.ResponseEntity)
			if err != nil {
				return nil, err
			}
			out[n].Instance = inst
		}
	}
	return out, nil
}

// Both batch decoders give what the reference gives, or the same error.
func FuzzDecodeBatch(f *testing.F) {
	for _, name := range []string{"testdata/batch-request.json", "testdata/batch-response.json"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	inst := string(eureka.AppendInstanceJSONBody(nil, &eureka.InstanceInfo{InstanceID: "h1", HasInstanceID: true, App: "A"}))
	for _, s := range []string{
		`null`, `{}`, `[]`, `"x"`, `{"replicationList":null}`, `{"replicationList":[]}`, `{"replicationList":[null,{}]}`,
		`{"REPLICATIONLIST":[{"APPNAME":"a","Id":"i","ſtatus":"UP","action":"Cancel","extra":{"x":[1]}}]}`,
		`{"replicationList":[{"appName":"a","id":"1"},{"id":"2"}],"replicationList":[{"id":"3"}],"replicationList":[null,null,{}]}`,
		`{"replicationList":[{"appName":"a"}],"replicationList":[],"replicationList":[null]}`,
		`{"replicationList":[{"appName":"a","appName":null,"id":5}]}`,
		`{"replicationList":[{"lastDirtyTimestamp":"12"},{"lastDirtyTimestamp":1.5},{"lastDirtyTimestamp":"01"},{"lastDirtyTimestamp":"+1"}]}`,
		`{"replicationList":[{"lastDirtyTimestamp":1.5,"lastDirtyTimestamp":7},{"lastDirtyTimestamp":"\u0031"},{"lastDirtyTimestamp":null}]}`,
		`{"replicationList":[{"lastDirtyTimestamp":" 1"},{"lastDirtyTimestamp":true},{"lastDirtyTimestamp":1e3}]}`,
		`{"replicationList":[{"instanceInfo":` + inst + `},{"instanceInfo":{"instance":` + inst + `}},{"instanceInfo":null}]}`,
		`{"replicationList":[{"instanceInfo":5,"instanceInfo":` + inst + `},{"instanceInfo":[]}]}`,
		`{"replicationList":[{"instanceInfo":{"hostName":{}}}],"replicationList":[]}`,
		`{"replicationList":[{"instanceInfo":` + inst + `}],"replicationList":[{"id":"x"}]}`,
		`{"responseList":[{"statusCode":200},{"statusCode":409,"responseEntity":` + inst + `},{"statusCode":null}]}`,
		`{"responseList":[{"statusCode":1.0}]}`, `{"responseList":[{"statusCode":"200"}]}`, `{"responseList":[{"statusCode":-0}]}`,
		`{"responseList":[{"responseEntity":"x"}],"responseList":[{"StatusCode":1}]}`,
		`{"replicationList":[{"instanceInfo":{"port":[`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		same(t, "DecodeBatch", data, DecodeBatch, legacyDecodeBatch)
		same(t, "DecodeResults", data, DecodeResults, legacyDecodeResults)
	})
}

func same[T any](t *testing.T, what string, data []byte, decode, legacy func([]byte) (T, error)) {
	t.Helper()
	got, err := decode(data)
	want, wantErr := legacy(data)
	switch {
	case err != nil || wantErr != nil:
		if err != wantErr {
			t.Fatalf("%s(%q): error %v, legacy error %v", what, data, err, wantErr)
		}
	case !reflect.DeepEqual(got, want):
		t.Fatalf("%s(%q):\n got    %#v\n legacy %#v", what, data, got, want)
	}
}
