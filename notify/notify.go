// Package notify is the one shape in which a registry announces that it
// changed: a Notifier's Changed, a channel closed at the next change, as
// Consul's blocking queries wait on a WatchCh. The Store (registry) and
// the discovery client (discovery) both are Notifiers; the gateways'
// sweepers, the xDS server's bridge and the gRPC resolver wait on one.
// Consumers that need each change itself (which app, which instance) use
// the Store's Subscribe instead.
package notify

// A Notifier announces its registry's changes.
//
// Changed returns a channel that is closed at the next change after the
// call (several changes may close it once): waiting costs the Notifier
// nothing per waiter, and there is no subscription to end. A consumer
// takes the channel before it reads what the channel guards, and the
// next one before it reads again, so that no change between goes
// unnoticed.
type Notifier interface {
	Changed() <-chan struct{}
}

// Of returns src as a Notifier and the channel of its next change, or
// nil and a nil channel (which never receives) when src announces no
// change.
func Of(src any) (Notifier, <-chan struct{}) {
	n, ok := src.(Notifier)
	if !ok {
		return nil, nil
	}
	return n, n.Changed()
}
