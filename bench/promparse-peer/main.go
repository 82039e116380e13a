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
	var ru0 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
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
	// CPU seconds (user + system, all threads, the collector's included): on a busy machine wall
	// time also counts waiting.
	cpu := float64(ru.Utime.Nano()+ru.Stime.Nano()-ru0.Utime.Nano()-ru0.Stime.Nano()) / 1e9
	fmt.Printf("mode=expfmt bytes=%d total_s=%.4f mb_per_s=%.1f cpu_s=%.4f mb_per_cpu_s=%.1f samples=%d peak_rss_kib=%d\n",
		st.Size(), secs, float64(st.Size())/1e6/secs, cpu, float64(st.Size())/1e6/cpu, samples, ru.Maxrss)
}
