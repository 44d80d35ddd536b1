package metrics_test

import (
	"log"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/redlock/redlock/metrics"
	"github.com/redlock/redlock/quorum"
)

// A Manager whose locks are measured, with one policy label per name prefix (a
// small, fixed set: never the raw name), served at /metrics.
func ExampleNew() {
	reg := prometheus.NewRegistry()
	obs, err := metrics.New(reg, func(name string) string {
		if strings.HasPrefix(name, "billing/") {
			return "billing"
		}
		return metrics.DefaultPolicy
	})
	if err != nil {
		log.Fatal(err)
	}
	m, err := quorum.New([]quorum.Node{
		{Name: "a", Addr: "127.0.0.1:7001"}, {Name: "b", Addr: "127.0.0.1:7002"}, {Name: "c", Addr: "127.0.0.1:7003"},
	}, quorum.WithObserver(obs))
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
}
