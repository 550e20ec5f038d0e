package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// untilStopped runs a study whose servers are processes of their own,
// with a context that every way out cancels, so that the study stops its
// servers first: Ctrl-C, SIGTERM, SIGHUP, and a closed stdout (| head),
// whose SIGPIPE would otherwise end this process on the spot, leaving the
// servers running; its writes fail instead, which ends the run.
func untilStopped(out io.Writer, run func(ctx context.Context, out io.Writer) error) error {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	err := run(ctx, cancelOnError{out, cancel})
	if ctx.Err() != nil {
		return errors.New("interrupted; the servers have stopped")
	}
	return err
}

// cancelOnError is a writer that cancels the run when a write fails.
type cancelOnError struct {
	w      io.Writer
	cancel func()
}

func (c cancelOnError) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if err != nil {
		c.cancel()
	}
	return n, err
}
