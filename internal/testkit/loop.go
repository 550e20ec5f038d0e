package testkit

import "sync"

// Loop runs f over and over on each of workers goroutines (f gets the
// worker's number) until the returned stop is called, which waits for
// them: a steady load or a reader racing the writes of a test. stop may
// be called more than once.
func Loop(workers int, f func(worker int)) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				f(w)
			}
		}()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
		})
	}
}

// InParallel runs f once on each of workers goroutines (f gets the
// worker's number) and returns when every one has returned: writers and
// readers racing each other in a test.
func InParallel(workers int, f func(worker int)) {
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(w)
		}()
	}
	wg.Wait()
}
