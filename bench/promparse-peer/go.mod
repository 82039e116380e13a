// The benchmark peer of bench_promparse: Prometheus' text parser, pinned.
module gpu-cost/bench/promparse-peer

go 1.24.0

require github.com/prometheus/common v0.62.0

require (
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/prometheus/client_model v0.6.1 // indirect
	google.golang.org/protobuf v1.36.1 // indirect
)
