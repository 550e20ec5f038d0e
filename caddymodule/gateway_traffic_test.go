package caddymodule

import (
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/eurekagate/eurekagate/eureka"
)

// The observation's one log field writes what the separate fields wrote:
// app, then region, limited and breaker when they apply, then the
// instance of the last attempt.
func TestObservedLogFieldIsTheFields(t *testing.T) {
	inst := &eureka.InstanceInfo{InstanceID: "orders-1", HasInstanceID: true, App: "ORDERS"}
	for _, c := range []struct {
		name                     string
		region, limited, breaker string
		inst                     *eureka.InstanceInfo
		want                     []zap.Field
	}{
		{name: "routed", inst: inst, want: []zap.Field{zap.String("app", "ORDERS"), zap.String("instance", "orders-1")}},
		{name: "answered", want: []zap.Field{zap.String("app", "ORDERS")}},
		{name: "every field", region: "eu", limited: "client", breaker: "open", inst: inst, want: []zap.Field{
			zap.String("app", "ORDERS"), zap.String("region", "eu"), zap.String("limited", "client"),
			zap.String("breaker", "open"), zap.String("instance", "orders-1")}},
	} {
		o := &observed{inst: c.inst}
		o.App, o.FailoverRegion, o.Limited, o.Breaker = "ORDERS", c.region, c.limited, c.breaker
		got := encodeFields(t, zapcore.Field{Key: logFieldsKey, Type: zapcore.InlineMarshalerType, Interface: o})
		if want := encodeFields(t, c.want...); got != want {
			t.Errorf("%s: %s, want %s", c.name, got, want)
		}
	}
}

// encodeFields is the JSON line of a log entry with fields.
func encodeFields(t *testing.T, fields ...zap.Field) string {
	enc := zapcore.NewJSONEncoder(zapcore.EncoderConfig{MessageKey: "msg"})
	buf, err := enc.EncodeEntry(zapcore.Entry{Message: "handled request"}, fields)
	if err != nil {
		t.Fatal(err)
	}
	return buf.String()
}
