package replication

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

var update = flag.Bool("update", false, "rewrite golden files")

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		os.WriteFile(path, got, 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\ngot  %s\nwant %s", path, got, want)
	}
	if !json.Valid(got) {
		t.Errorf("%s is not JSON", path)
	}
}

// The batch request and response, shaped as protocol doc 3.11: no root
// wrapper, null fields omitted, instanceInfo and responseEntity as
// unwrapped legacy InstanceInfo objects.
func TestReplicationBatchGolden(t *testing.T) {
	h1 := testkit.Inst("ORDERS", "h1:orders:8080")
	h1.LastDirtyTimestamp, h1.LastUpdatedTimestamp, h1.ActionType = 1718000000050, 1718000000123, eureka.ActionAdded
	h1.LeaseInfo.RegistrationTimestamp, h1.LeaseInfo.LastRenewalTimestamp, h1.LeaseInfo.ServiceUpTimestamp = 1718000000123, 1718000000123, 1718000000100
	items := []Item{
		{AppName: "ORDERS", ID: "h1:orders:8080", LastDirtyTimestamp: 1718000000050, Status: "UP", Instance: h1, Action: ActionRegister},
		{AppName: "ORDERS", ID: "h1:orders:8080", LastDirtyTimestamp: 1718000000050, OverriddenStatus: "OUT_OF_SERVICE", Status: "OUT_OF_SERVICE", Action: ActionHeartbeat},
		{AppName: "ORDERS", ID: "h2:orders:8080", Action: ActionCancel},
		{AppName: "ORDERS", ID: "h3:orders:8080", LastDirtyTimestamp: 1718000000777, Status: "OUT_OF_SERVICE", Action: ActionStatusUpdate},
		{AppName: "ORDERS", ID: "h3:orders:8080", LastDirtyTimestamp: 1718000000777, Status: "UP", Action: ActionDeleteStatusOverride},
	}
	req := AppendBatch(nil, items)
	checkGolden(t, "testdata/batch-request.json", req)
	back, err := DecodeBatch(req)
	if err != nil || len(back) != len(items) || back[0].Instance.ID() != "h1:orders:8080" || back[1].OverriddenStatus != "OUT_OF_SERVICE" {
		t.Fatalf("request does not read back: %v %+v", err, back)
	}

	results := []Result{{StatusCode: 200}, {StatusCode: 409, Instance: h1}, {StatusCode: 404}, {StatusCode: 200}, {StatusCode: 200}}
	resp := AppendResults(nil, results)
	checkGolden(t, "testdata/batch-response.json", resp)
	decoded, err := DecodeResults(resp)
	if err != nil || len(decoded) != 5 || decoded[1].Instance == nil || decoded[1].Instance.LastDirtyTimestamp != 1718000000050 {
		t.Fatalf("response does not read back: %v %+v", err, decoded)
	}
}
