// The benchmark peer of the REST API under wrk: Go's net/http serving the same bytes (stdlib only).
module gpu-cost/bench/http-peer

go 1.24.0
