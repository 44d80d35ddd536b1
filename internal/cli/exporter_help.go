package cli

import (
	"regexp"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// buildInfoDesc is redlock_build_info, which buildInfo serves next to the
// collector's metrics.
var buildInfoDesc = prometheus.NewDesc("redlock_build_info", "The running redlock's version; always 1.",
	[]string{"version", "commit", "goversion"}, nil)

// buildInfoCollector serves redlock_build_info: version, commit, Go version.
type buildInfoCollector [3]string

// Describe implements prometheus.Collector.
func (b buildInfoCollector) Describe(ch chan<- *prometheus.Desc) { ch <- buildInfoDesc }

// Collect implements prometheus.Collector.
func (b buildInfoCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(buildInfoDesc, prometheus.GaugeValue, 1, b[0], b[1], b[2])
}

// descParts reads a metric's name and variable labels from its Desc, whose
// String is the only place the client library shows them.
var descParts = regexp.MustCompile(`fqName: "([^"]+)".*variableLabels: \{([^}]*)\}`)

// exporterMetricsText lists every metric exporter serves, "name{label,...}",
// from their declarations, wrapped for the help.
func exporterMetricsText() string {
	var b strings.Builder
	line := " "
	var items []string
	for _, d := range append(exporterDescs[:len(exporterDescs):len(exporterDescs)], buildInfoDesc) {
		m := descParts.FindStringSubmatch(d.String())
		if m == nil {
			continue
		}
		item := m[1]
		if labels := strings.ReplaceAll(m[2], " ", ""); labels != "" {
			item += "{" + labels + "}"
		}
		items = append(items, item+",")
	}
	items = append(items, "and the HTTP handler's own promhttp_*.")
	for _, item := range items {
		if len(line)+1+len(item) > 80 {
			b.WriteString(line + "\n")
			line = " "
		}
		line += " " + item
	}
	b.WriteString(line)
	return b.String()
}
