module github.com/eurekagate/eurekagate

go 1.26.0

require (
	github.com/cenkalti/backoff/v4 v4.1.1 // indirect
	github.com/clbanning/mxj v1.8.4 // indirect
	github.com/franela/goreq v0.0.0-20171204163338-bcd34c9993f8 // indirect
	github.com/hudl/fargo v1.4.0 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/miekg/dns v1.1.43 // indirect
	github.com/molecule-man/go-brrr v1.3.1 // indirect
	github.com/op/go-logging v0.0.0-20160315200505-970db520ece7 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	github.com/valyala/fasthttp v1.78.0 // indirect
	go.uber.org/dig v1.19.0 // indirect
	go.uber.org/fx v1.24.0 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	go.uber.org/multierr v1.10.0 // indirect
	go.uber.org/zap v1.28.0 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/time v0.16.0 // indirect
	gopkg.in/gcfg.v1 v1.2.3 // indirect
	gopkg.in/warnings.v0 v0.1.2 // indirect
)
