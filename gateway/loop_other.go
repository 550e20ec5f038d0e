//go:build !unix

package gateway

// loopsSupported is false where connections cannot be handed from the
// event loops to fasthttp (no net.FileConn): fasthttp serves every
// connection.
const loopsSupported = false
