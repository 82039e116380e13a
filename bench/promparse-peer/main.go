// The benchmark peer of bench_promparse: Prometheus' own text parser (expfmt.TextParser from
// github.com/prometheus/common) reading the same dcgm-exporter body, timed the same way.
package main

import (
	"bufio"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/prometheus/common/expfmt"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: promparse-peer FILE")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	start := time.Now()
	var p expfmt.TextParser
	// A 64 KiB read buffer, as the C side reads the file in 64 KiB chunks.
	families, err := p.TextToMetricFamilies(bufio.NewReaderSize(f, 64*1024))
	if err != nil {
		fmt.Fprintln(os.Stderr, "parse:", err)
		os.Exit(1)
	}
	secs := time.Since(start).Seconds()
	samples := 0
	for _, mf := range families {
		samples += len(mf.GetMetric())
	}
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	fmt.Printf("mode=expfmt bytes=%d total_s=%.4f mb_per_s=%.1f samples=%d peak_rss_kib=%d\n",
		st.Size(), secs, float64(st.Size())/1e6/secs, samples, ru.Maxrss)
}
