// http-peer: Go's net/http serving one fixed response, the peer of gpu-cost's API under wrk.
//
// It answers every GET of -path with the bytes of -body (fetched once from our server by
// scripts/bench.sh) and the same Content-Type, so both servers send the same response and the
// load run compares the servers alone: no query, no cache, just net/http's request handling.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on (port 0: any free port)")
	path := flag.String("path", "/api/v1/costs", "the path served")
	bodyFile := flag.String("body", "", "file holding the response body")
	ctype := flag.String("content-type", "application/json", "Content-Type of the response")
	flag.Parse()

	body, err := os.ReadFile(*bodyFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "http-peer:", err)
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "http-peer:", err)
		os.Exit(1)
	}
	length := strconv.Itoa(len(body))
	mux := http.NewServeMux()
	mux.HandleFunc(*path, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("Content-Type", *ctype)
		h.Set("Content-Length", length)
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			w.Write(body)
		}
	})
	// The port on standard output, for the script that started it.
	fmt.Printf("listening %d\n", ln.Addr().(*net.TCPAddr).Port)
	os.Stdout.Sync()
	if err := http.Serve(ln, mux); err != nil {
		fmt.Fprintln(os.Stderr, "http-peer:", err)
		os.Exit(1)
	}
}
