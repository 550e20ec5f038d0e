// Command service is an fx service that registers itself with Eureka
// through the Discovery module, serves HTTP, and calls another service by
// name through the Balancer module.
//
// Start a registry, two inventories and an orders service that calls them:
//
//	go run ./examples/registry -addr 127.0.0.1:8761
//	go run ./examples/service -name inventory -addr 127.0.0.1:9001
//	go run ./examples/service -name inventory -addr 127.0.0.1:9002
//	go run ./examples/service -name orders -addr 127.0.0.1:9000 -calls inventory
//	curl http://127.0.0.1:9000/call   # answered by each inventory in turn
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/discovery"
	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/fxmodules"
)

// Config is the service's settings.
type Config struct {
	Name          string        // application name
	Addr          string        // listen address (host:port)
	EurekaURL     string        // Eureka service URL
	Calls         string        // application to call on /call, if any
	FetchInterval time.Duration // registry fetch and heartbeat interval
}

func main() {
	var cfg Config
	flag.StringVar(&cfg.Name, "name", "orders", "application name")
	flag.StringVar(&cfg.Addr, "addr", "127.0.0.1:9000", "listen address")
	flag.StringVar(&cfg.EurekaURL, "eureka", "http://127.0.0.1:8761/eureka/", "Eureka service URL")
	flag.StringVar(&cfg.Calls, "calls", "", "application to call on /call")
	flag.DurationVar(&cfg.FetchInterval, "interval", 30*time.Second, "registry fetch and heartbeat interval")
	flag.Parse()
	// Info and up, without the stack traces development loggers add to
	// warnings.
	log, _ := zap.NewDevelopment(zap.IncreaseLevel(zap.InfoLevel), zap.AddStacktrace(zap.ErrorLevel))
	opts, err := options(cfg, log)
	if err != nil {
		log.Fatal("bad settings", zap.Error(err))
	}
	fx.New(opts).Run()
}

// options is the whole application, so that tests can start it.
func options(cfg Config, log *zap.Logger) (fx.Option, error) {
	host, portText, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return nil, err
	}
	return fx.Options(
		fxmodules.Discovery,
		fxmodules.RemoteInstances,
		fxmodules.Balancer,
		fx.Supply(cfg, log, discovery.Config{
			ServiceURLs:           []string{cfg.EurekaURL},
			RegistryFetchInterval: cfg.FetchInterval,
			Instance: &discovery.InstanceConfig{
				AppName: cfg.Name, HostName: host, IPAddr: host, Port: port,
				LeaseRenewalInterval: cfg.FetchInterval,
				// Registered as STARTING; UP once the server listens, so
				// that nobody is routed here before it can answer.
				Status: eureka.StatusStarting,
			},
		}),
		fx.Provide(newHTTPServer),
		fx.Invoke(func(*http.Server) {}),
		fx.WithLogger(func() fxevent.Logger {
			l := &fxevent.ZapLogger{Logger: log.Named("fx")}
			l.UseLogLevel(zap.DebugLevel) // fx's start-up events; its errors still show
			return l
		}),
	), nil
}

// newHTTPServer serves /hello (who answered) and /call (a call to
// cfg.Calls by name, through the balancer).
func newHTTPServer(lc fx.Lifecycle, cfg Config, client *discovery.Client, bal *balancer.Balancer) *http.Server {
	callee := &balancer.HTTPClient{Balancer: bal, Client: &http.Client{Timeout: 5 * time.Second}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		inst, _ := client.Instance()
		fmt.Fprintf(w, "%s %s", cfg.Name, inst.InstanceID)
	})
	mux.HandleFunc("GET /call", func(w http.ResponseWriter, r *http.Request) {
		if cfg.Calls == "" {
			http.Error(w, "this service calls nobody", http.StatusNotFound)
			return
		}
		req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, "http://"+cfg.Calls+"/hello", nil)
		resp, err := callee.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	})
	srv := &http.Server{Addr: cfg.Addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	lc.Append(fx.Hook{
		// Listen synchronously so a bind error fails the start; serve in
		// the background.
		OnStart: func(context.Context) error {
			ln, err := net.Listen("tcp", cfg.Addr)
			if err != nil {
				return err
			}
			if err := client.SetStatus(eureka.StatusUp); err != nil {
				ln.Close()
				return err
			}
			go func() {
				defer close(done)
				if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
					fmt.Println("serve:", err)
				}
			}()
			return nil
		},
		OnStop: func(ctx context.Context) error {
			err := srv.Shutdown(ctx)
			<-done
			return err
		},
	})
	return srv
}
