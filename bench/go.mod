module github.com/ringloop/ringloop/bench

go 1.26.8

require (
	github.com/HdrHistogram/hdrhistogram-go v1.4.0
	github.com/gorilla/websocket v1.5.3
	github.com/miekg/dns v1.1.73
	github.com/panjf2000/gnet/v2 v2.10.0
	github.com/ringloop/ringloop v0.0.0
	github.com/ringloop/ringloop/examples/dns v0.0.0
	github.com/stretchr/testify v1.11.1
	github.com/valyala/fasthttp v1.77.0
	golang.org/x/net v0.61.0
	golang.org/x/sys v0.49.0
	google.golang.org/grpc v1.85.0
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/molecule-man/go-brrr v1.3.0 // indirect
	github.com/panjf2000/ants/v2 v2.12.1 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	go.uber.org/multierr v1.11.0 // indirect
	go.uber.org/zap v1.28.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1 // indirect
	gopkg.in/natefinch/lumberjack.v2 v2.2.1 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

replace github.com/ringloop/ringloop => ../

replace github.com/ringloop/ringloop/examples/dns => ../examples/dns
