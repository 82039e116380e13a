// Command informer-peer is the benchmark peer of gpu-cost-controller's initial sync: what a Go
// controller built the usual way would be. One client-go SharedInformerFactory caches every
// pod, node and namespace (a cost controller has to see all pods to find the GPU ones), waits
// for the caches to sync, prints how long that took, and then stays up so its RSS can be read.
// With --dra it also caches every resource.k8s.io/v1 ResourceSlice and ResourceClaim, as a cost
// controller must once GPUs are allocated through Dynamic Resource Allocation (the benchmark
// passes it when the cluster has DRA pods, so both sides watch the same objects).
//
// Usage: informer-peer --kubeconfig FILE [--strip-managed-fields] [--protobuf] [--careful] [--dra]
//
// Output (stdout, one line after sync):
//
//	synced sync_s=1.234 pods=10000 gpu_pods=1000 dra_pods=0 nodes=200 namespaces=20
//	slices=-1 claims=-1 heap_inuse_mib=... careful=false lists=0 watchlists=3
//	watchlist_gate=true streaming_list=used
//
// gpu_pods counts the pods asking for an nvidia.com/ resource or naming a ResourceClaim, i.e.
// the pods a cost controller must look at (dra_pods: those naming a claim); slices and claims
// are -1 without --dra.
//
// and on SIGUSR1, a diagnostic the benchmark asks for after it has read the RSS: a forced
// garbage collection with the freed memory returned to the OS, then what is live
// ("gc heap_alloc_mib=..."), i.e. the cache itself without the garbage of the initial LIST.
//
// --strip-managed-fields installs an informer transform that drops metadata.managedFields
// before objects enter the cache (client-go's SetTransform), a memory saving some controllers
// opt into; without it the peer is the plain informer most controllers run. --protobuf asks
// for protobuf instead of client-go's default JSON, as Kubernetes' own controllers do.
//
// --careful is the peer a careful Go engineer would write for a GPU cost controller: protobuf,
// a transform that keeps only the fields such a controller reads and cuts every non-GPU pod
// down to a stub (careful.go says what is kept), and the streaming list (client-go's
// WatchListClient feature: a watch with sendInitialEvents=true instead of a LIST) turned on
// explicitly. It implies --protobuf; --strip-managed-fields has nothing left to do beside it.
//
// Whether the initial state came as a streaming list is read off the requests themselves (a
// wrapper of the client's transport counts them up to the sync): lists= counts plain LISTs,
// watchlists= watches with sendInitialEvents=true; streaming_list= is "used" when there were
// watch-lists and no LIST, "fallback" when client-go asked for one and then listed (a server
// without the feature), "not-used" otherwise. watchlist_gate= is client-go's WatchListClient
// gate as this process sees it (client-go v0.37 turns it on by default; the env var
// KUBE_FEATURE_WatchListClient=false turns it off for the other modes).
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

func stripManagedFields(obj interface{}) (interface{}, error) {
	if a, err := meta.Accessor(obj); err == nil {
		a.SetManagedFields(nil)
	}
	return obj, nil
}

// requestCounter counts, until the caches have synced, the informers' initial requests: plain
// LISTs and watch-lists (watches with sendInitialEvents=true).
type requestCounter struct {
	next              http.RoundTripper
	lists, watchLists atomic.Int64
}

func (c *requestCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet {
		q := req.URL.Query()
		switch {
		case q.Get("sendInitialEvents") == "true":
			c.watchLists.Add(1)
		case q.Get("watch") != "true" && q.Get("watch") != "1":
			c.lists.Add(1)
		}
	}
	return c.next.RoundTrip(req)
}

func gpuPod(p *corev1.Pod) bool {
	if len(p.Spec.ResourceClaims) > 0 {
		return true
	}
	all := append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...)
	for _, c := range all {
		for name := range c.Resources.Limits {
			if strings.HasPrefix(string(name), "nvidia.com/") {
				return true
			}
		}
		for name := range c.Resources.Requests {
			if strings.HasPrefix(string(name), "nvidia.com/") {
				return true
			}
		}
	}
	return false
}

func main() {
	start := time.Now()
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file (required)")
	strip := flag.Bool("strip-managed-fields", false, "drop metadata.managedFields before caching")
	proto := flag.Bool("protobuf", false, "ask the API server for protobuf instead of JSON")
	dra := flag.Bool("dra", false, "also cache resource.k8s.io/v1 ResourceSlices and ResourceClaims")
	careful := flag.Bool("careful", false, "protobuf, a transform keeping only what a GPU cost "+
		"controller reads (non-GPU pods as stubs), and the streaming list")
	flag.Parse()
	if *careful {
		*proto = true
		// Before any informer exists: each reflector reads the gate when it is made.
		gates, ok := clientfeatures.FeatureGates().(interface {
			Set(clientfeatures.Feature, bool) error
		})
		if !ok {
			fmt.Fprintln(os.Stderr, "informer-peer: client-go's feature gates cannot be set")
			os.Exit(1)
		}
		if err := gates.Set(clientfeatures.WatchListClient, true); err != nil {
			fmt.Fprintln(os.Stderr, "informer-peer:", err)
			os.Exit(1)
		}
	}
	if *kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "informer-peer: --kubeconfig is required")
		os.Exit(2)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, "informer-peer:", err)
		os.Exit(1)
	}
	if *proto {
		cfg.ContentType = "application/vnd.kubernetes.protobuf"
		cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	}
	counter := &requestCounter{}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		counter.next = rt
		return counter
	})
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "informer-peer:", err)
		os.Exit(1)
	}

	opts := []informers.SharedInformerOption{}
	switch {
	case *careful:
		opts = append(opts, informers.WithTransform(carefulTransform))
	case *strip:
		opts = append(opts, informers.WithTransform(stripManagedFields))
	}
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, opts...)
	pods := factory.Core().V1().Pods()
	nodes := factory.Core().V1().Nodes()
	namespaces := factory.Core().V1().Namespaces()
	// Asking for the informers registers them with the factory; a controller would add its
	// event handlers here.
	infs := []cache.SharedIndexInformer{pods.Informer(), nodes.Informer(), namespaces.Informer()}
	slices := factory.Resource().V1().ResourceSlices()
	claims := factory.Resource().V1().ResourceClaims()
	if *dra {
		infs = append(infs, slices.Informer(), claims.Informer())
	}
	for _, inf := range infs {
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{}); err != nil {
			fmt.Fprintln(os.Stderr, "informer-peer:", err)
			os.Exit(1)
		}
	}

	stop := make(chan struct{})
	factory.Start(stop)
	for typ, ok := range factory.WaitForCacheSync(stop) {
		if !ok {
			fmt.Fprintf(os.Stderr, "informer-peer: cache of %v did not sync\n", typ)
			os.Exit(1)
		}
	}
	syncS := time.Since(start).Seconds()
	lists, watchLists := counter.lists.Load(), counter.watchLists.Load()
	streaming := "not-used"
	switch {
	case watchLists > 0 && lists == 0:
		streaming = "used"
	case watchLists > 0:
		streaming = "fallback"
	}

	allPods, _ := pods.Lister().List(labels.Everything())
	gpu, draPods := 0, 0
	for _, p := range allPods {
		if gpuPod(p) {
			gpu++
		}
		if len(p.Spec.ResourceClaims) > 0 {
			draPods++
		}
	}
	allNodes, _ := nodes.Lister().List(labels.Everything())
	allNs, _ := namespaces.Lister().List(labels.Everything())
	nSlices, nClaims := -1, -1
	if *dra {
		s, _ := slices.Lister().List(labels.Everything())
		c, _ := claims.Lister().List(labels.Everything())
		nSlices, nClaims = len(s), len(c)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("synced sync_s=%.3f pods=%d gpu_pods=%d dra_pods=%d nodes=%d namespaces=%d "+
		"slices=%d claims=%d heap_inuse_mib=%.1f strip_managed_fields=%t protobuf=%t dra=%t "+
		"careful=%t lists=%d watchlists=%d watchlist_gate=%t streaming_list=%s\n",
		syncS, len(allPods), gpu, draPods, len(allNodes), len(allNs), nSlices, nClaims,
		float64(ms.HeapInuse)/(1<<20), *strip, *proto, *dra, *careful, lists, watchLists,
		clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient), streaming)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGUSR1)
	for s := range sig {
		if s != syscall.SIGUSR1 {
			break
		}
		debug.FreeOSMemory() // a full collection, then the freed pages go back to the OS
		runtime.ReadMemStats(&ms)
		fmt.Printf("gc heap_alloc_mib=%.1f heap_inuse_mib=%.1f sys_mib=%.1f\n",
			float64(ms.HeapAlloc)/(1<<20), float64(ms.HeapInuse)/(1<<20),
			float64(ms.Sys)/(1<<20))
	}
	close(stop)
	// Keep the caches reachable until the end, as a controller using its listers would.
	runtime.KeepAlive(factory)
}
