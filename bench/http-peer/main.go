// http-peer: Go's net/http serving fixed responses, the peer of gpu-cost's API under wrk and
// under hostile clients (bench/attack_latency.py).
//
// It answers every GET of -path with the bytes of -body (fetched once from our server by
// scripts/bench.sh) and the same Content-Type, so both servers send the same response and the
// load run compares the servers alone: no query, no cache, just net/http's request handling.
// -route PATH=FILE (repeatable) serves more paths the same way. -read-header-timeout and
// -idle-timeout set net/http's own limits (none by default, as before); -cert and -key serve
// HTTPS (whose handshake net/http counts in the read-header timeout).
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
)

type routes []string

func (r *routes) String() string     { return strings.Join(*r, ",") }
func (r *routes) Set(v string) error { *r = append(*r, v); return nil }

func serveFile(mux *http.ServeMux, path, file, ctype string) {
	body, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, "http-peer:", err)
		os.Exit(2)
	}
	length := strconv.Itoa(len(body))
	mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("Content-Type", ctype)
		h.Set("Content-Length", length)
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			w.Write(body)
		}
	})
}

func main() {
	var more routes
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on (port 0: any free port)")
	path := flag.String("path", "/api/v1/costs", "the path served")
	bodyFile := flag.String("body", "", "file holding the response body")
	ctype := flag.String("content-type", "application/json", "Content-Type of the response")
	flag.Var(&more, "route", "PATH=FILE: another path, answered with FILE's bytes (repeatable)")
	headerTimeout := flag.Duration("read-header-timeout", 0, "net/http's ReadHeaderTimeout")
	idleTimeout := flag.Duration("idle-timeout", 0, "net/http's IdleTimeout")
	cert := flag.String("cert", "", "PEM certificate: serve HTTPS")
	key := flag.String("key", "", "PEM key of -cert")
	flag.Parse()

	mux := http.NewServeMux()
	serveFile(mux, *path, *bodyFile, *ctype)
	for _, r := range more {
		p, f, ok := strings.Cut(r, "=")
		if !ok {
			fmt.Fprintln(os.Stderr, "http-peer: -route wants PATH=FILE:", r)
			os.Exit(2)
		}
		serveFile(mux, p, f, *ctype)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "http-peer:", err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: *headerTimeout, IdleTimeout: *idleTimeout}
	// The port on standard output, for the script that started it.
	fmt.Printf("listening %d\n", ln.Addr().(*net.TCPAddr).Port)
	os.Stdout.Sync()
	if *cert != "" {
		err = srv.ServeTLS(ln, *cert, *key)
	} else {
		err = srv.Serve(ln)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "http-peer:", err)
		os.Exit(1)
	}
}
