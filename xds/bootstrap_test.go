package xds_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/encoding/protojson"
)

// The Envoy bootstrap the docs give decodes strictly (no unknown field)
// into Envoy's bootstrap type and passes Envoy's validation.
func TestDocumentedEnvoyBootstrap(t *testing.T) {
	page, err := os.ReadFile("../docs/grpc-and-envoy.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(page), "```yaml\n")
	block, _, closed := strings.Cut(rest, "```")
	if !ok || !closed {
		t.Fatal("docs/grpc-and-envoy.md has no yaml block")
	}
	var doc any
	if err := yaml.Unmarshal([]byte(block), &doc); err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var b bootstrapv3.Bootstrap
	if err := protojson.Unmarshal(js, &b); err != nil {
		t.Fatalf("the bootstrap does not decode: %v", err)
	}
	if err := b.ValidateAll(); err != nil {
		t.Fatalf("the bootstrap fails Envoy's validation: %v", err)
	}
	if got := b.StaticResources.Listeners[0].String(); !strings.Contains(got, `"eureka_gateway"`) {
		t.Errorf("the listener does not read the gateway's routes: %s", got)
	}
}
