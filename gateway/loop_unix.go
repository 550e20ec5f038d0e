//go:build unix

package gateway

// loopsSupported reports whether Server can run its event loops here:
// they hand connections to fasthttp as duplicated file descriptors.
const loopsSupported = true
