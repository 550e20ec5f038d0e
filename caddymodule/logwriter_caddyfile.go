package caddymodule

import (
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// UnmarshalCaddyfile sets up the writer from Caddyfile tokens, in a log
// block's output:
//
//	output eureka_buffered {
//		size <bytes>
//		flush_interval <duration>
//		output <writer> [<args...>] [{ ... }]
//	}
func (b *BufferedWriter) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the writer's name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		var err error
		switch d.Val() {
		case "size":
			if err = sizeArg(d, &b.Size); err == nil && b.Size > maxLogBufferSize {
				err = d.Errf("size %q is above 64MiB, the most a log's buffer takes", d.Val())
			}
		case "flush_interval":
			if err = durationArg(d, &b.FlushInterval); err == nil {
				if cerr := checkLogFlushInterval(time.Duration(b.FlushInterval)); cerr != nil {
					err = d.Errf("flush_interval %v", cerr)
				}
			}
		case "output":
			err = b.unmarshalOutput(d)
		default:
			err = d.Errf("eureka_buffered has no option %q; it has size, flush_interval and output", d.Val())
		}
		if err != nil {
			return err
		}
	}
	if b.WriterRaw == nil {
		return d.Err("eureka_buffered: output is required, the writer the entries go to, such as output file access.log")
	}
	return nil
}

// unmarshalOutput reads the wrapped writer as Caddy's log directive reads
// its output: stdout, stderr and discard by name (Caddy's own writers have
// no Caddyfile parser), any other writer module by its own.
func (b *BufferedWriter) unmarshalOutput(d *caddyfile.Dispenser) error {
	if b.WriterRaw != nil {
		return d.Err("eureka_buffered: output given twice")
	}
	if !d.NextArg() {
		return d.ArgErr()
	}
	name := d.Val()
	var wo caddy.WriterOpener
	switch name {
	case "stdout", "stderr", "discard":
		if d.NextArg() || d.NextBlock(d.Nesting()) {
			return d.Errf("eureka_buffered: output %s takes no arguments and no block", name)
		}
		wo = map[string]caddy.WriterOpener{"stdout": caddy.StdoutWriter{}, "stderr": caddy.StderrWriter{}, "discard": caddy.DiscardWriter{}}[name]
	default:
		unm, err := caddyfile.UnmarshalModule(d, "caddy.logging.writers."+name)
		if err != nil {
			return err
		}
		var ok bool
		if wo, ok = unm.(caddy.WriterOpener); !ok {
			return d.Errf("eureka_buffered: output %s is not a log writer", name)
		}
	}
	b.WriterRaw = caddyconfig.JSONModuleObject(wo, "output", name, nil)
	return nil
}

// Interface guard
var _ caddyfile.Unmarshaler = (*BufferedWriter)(nil)
