package eureka

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"testing"
	"testing/iotest"
)

// readAll collects what ReadApplicationsJSON hands over.
func readAll(data []byte) ([]*Application, error) {
	var got []*Application
	err := ReadApplicationsJSON(iotest.HalfReader(bytes.NewReader(data)), func(a *Application) error {
		got = append(got, a)
		return nil
	})
	return got, err
}

// The streaming reader gives the applications DecodeApplicationsJSON
// gives, for every dialect of the list.
func TestReadApplicationsJSONAsDecode(t *testing.T) {
	docs := map[string][]byte{
		"sample":        AppendApplicationsJSON(nil, sampleApps()),
		"single object": []byte(`{"applications":{"versions__delta":"3","application":{"name":"ORDERS","instance":{"hostName":"h","app":"ORDERS"}}}}`),
		"nulls and unknown keys": []byte(`{"x":[1,{"a":2}],"APPLICATIONS":{"apps__hashcode":"UP_1_","other":{"application":[]},
			"Application":[null,{"name":"A","instance":[{"hostName":"a1","app":"A"},null]},{"name":"B","instance":null}]}}`),
		"no applications": []byte(`{"applications":{"versions__delta":1,"apps__hashcode":""}}`),
	}
	for _, name := range []string{"full.json", "delta.json", "empty.json", "vip.json"} {
		data, err := os.ReadFile("testdata/golden/" + name)
		if err != nil {
			t.Fatal(err)
		}
		docs[name] = data
	}
	for name, data := range docs {
		want, err := DecodeApplicationsJSON(data)
		if err != nil {
			t.Fatalf("%s: the whole-document decoder refuses it: %v", name, err)
		}
		got, err := readAll(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got) != len(want.Applications) || (len(got) > 0 && !reflect.DeepEqual(got, want.Applications)) {
			t.Errorf("%s:\n got  %#v\n want %#v", name, got, want.Applications)
		}
	}
}

// A document cut anywhere is an error, never a shorter registry read
// whole: the start-up sync must tell a partial read from a complete one.
func TestReadApplicationsJSONRefusesEveryTruncation(t *testing.T) {
	data := AppendApplicationsJSON(nil, sampleApps())
	for n := range len(data) {
		if _, err := readAll(data[:n]); !errors.Is(err, ErrCannotParse) {
			t.Fatalf("cut at %d of %d bytes: error %v, want ErrCannotParse", n, len(data), err)
		}
	}
	for _, bad := range []string{`[]`, `{"applications":{"application":[1]}}`, `{"applications":{"application":"x"}}`, `{"applications":{}} {}`, `{"applications":null}`, `null`} {
		if _, err := readAll([]byte(bad)); !errors.Is(err, ErrCannotParse) {
			t.Errorf("%s: error %v, want ErrCannotParse", bad, err)
		}
	}
}

// each's error ends the read and comes back as it is.
func TestReadApplicationsJSONStopsOnEachsError(t *testing.T) {
	stop := errors.New("enough")
	calls := 0
	err := ReadApplicationsJSON(bytes.NewReader(AppendApplicationsJSON(nil, sampleApps())), func(*Application) error {
		calls++
		return stop
	})
	if err != stop || calls != 1 {
		t.Fatalf("error %v after %d calls, want %v after 1", err, calls, stop)
	}
}
