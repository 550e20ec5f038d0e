package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// -gateway-access-log (or EUREKA_GATEWAY_ACCESS_LOG) names the gateway's
// access log, and is refused without a gateway.
func TestGatewayAccessLogOption(t *testing.T) {
	o, err := parseOptions([]string{"-gateway", "127.0.0.1:8080"}, envOf(map[string]string{"EUREKA_GATEWAY_ACCESS_LOG": "access.log"}), io.Discard)
	if err != nil || o.gatewayAccessLog != "access.log" {
		t.Errorf("-gateway-access-log from the environment: %+v, %v", o, err)
	}
	if d, _ := parseOptions(nil, noEnv, io.Discard); d.gatewayAccessLog != "" || d.gateway.AccessLog != nil {
		t.Errorf("an access log by default: %q", d.gatewayAccessLog)
	}
	_, err = parseOptions([]string{"-gateway-access-log", "access.log"}, noEnv, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-gateway-access-log is set without -gateway") {
		t.Errorf("-gateway-access-log without -gateway: %v", err)
	}
	o, _ = parseOptions([]string{"-gateway", "127.0.0.1:8080", "-gateway-access-log", filepath.Join(t.TempDir(), "missing", "access.log")}, noEnv, io.Discard)
	if _, err := openAccessLog(o); err == nil || !strings.HasPrefix(err.Error(), "-gateway-access-log: ") {
		t.Errorf("an access log in a missing directory: %v", err)
	}
}

// The process writes a JSON line per gateway request to the file
// -gateway-access-log names, after what the file had, or to stdout.
func TestGatewayAccessLog(t *testing.T) {
	bin := binary(t)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "answered") }))
	defer backend.Close()
	port := backend.Listener.Addr().(*net.TCPAddr).Port
	for _, where := range []string{"file", "stdout"} {
		t.Run(where, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "access.log")
			const before = "a line from before\n"
			if err := os.WriteFile(path, []byte(before), 0o600); err != nil {
				t.Fatal(err)
			}
			arg := path
			if where == "stdout" {
				arg = "stdout"
			}
			proc := startProcess(t, bin, true, "-addr", "127.0.0.1:0", "-gateway", "127.0.0.1:0", "-gateway-access-log", arg)
			registry, gw, stdout := proc.registry, proc.gateway, proc.stdout
			body := fmt.Sprintf(`{"instance":{"instanceId":"orders-1","hostName":"127.0.0.1","app":"ORDERS","ipAddr":"127.0.0.1",`+
				`"status":"UP","port":{"$":%d,"@enabled":"true"},"securePort":{"$":443,"@enabled":"false"},`+
				`"dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"},`+
				`"leaseInfo":{"renewalIntervalInSecs":30,"durationInSecs":90}}}`, port)
			if status := testkit.StatusAs(t, "POST", registry+"/eureka/apps/ORDERS", "", "", body); status != 204 {
				t.Fatalf("register: %d", status)
			}
			if status, got := testkit.HTTPGet(t, gw+"/orders/items/7?x=1"); status != 200 || got != "answered" {
				t.Fatalf("through the gateway: %d %q", status, got)
			}
			http.DefaultClient.CloseIdleConnections()

			read := func() string {
				if where == "stdout" {
					return stdout.String()
				}
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				return string(data)
			}
			var line map[string]any
			testkit.Eventually(t, 5*time.Second, "the request's line", func() bool {
				text := read()
				if where == "file" {
					if !strings.HasPrefix(text, before) {
						t.Fatalf("the file no longer starts with what it had:\n%s", text)
					}
					text = strings.TrimPrefix(text, before)
				}
				first, _, ok := strings.Cut(text, "\n")
				return ok && json.Unmarshal([]byte(first), &line) == nil
			})
			req, _ := line["request"].(map[string]any)
			if line["logger"] != "http.log.access" || line["app"] != "ORDERS" || line["instance"] != "orders-1" || line["status"] != 200.0 ||
				line["size"] != float64(len("answered")) || req["uri"] != "/orders/items/7?x=1" {
				t.Errorf("logged %v", line)
			}

			// SIGINT stops it gracefully, and the log is closed.
			proc.stop(t)
			if n := strings.Count(read(), "\n"); (where == "file" && n != 2) || (where == "stdout" && n != 1) {
				t.Errorf("%d lines at the end:\n%s", n, read())
			}
		})
	}
}
