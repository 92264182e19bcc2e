package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/liqo-relay/relay/internal/core/status"
)

// probesSentMetric counts the probe requests a relay sent, by path name.
const probesSentMetric = "relay_probes_sent_total"

// scrapeTimeout bounds one request to a relay's admin server: a relay
// that does not answer in that time is a failed run, not a hang.
const scrapeTimeout = 10 * time.Second

var client = &http.Client{Timeout: scrapeTimeout}

// get fetches http://addr/path and hands its body to read.
func get(ctx context.Context, addr, path string, read func(io.Reader) error) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s%s: %s", addr, path, resp.Status)
	}
	err = read(resp.Body)
	_, _ = io.Copy(io.Discard, resp.Body)
	return err
}

// scrapeByLabel sums the series of metric on the relay's admin /metrics
// into out, by the value of label ("" for series without it).
func scrapeByLabel(ctx context.Context, addr, metric, label string, out map[string]float64) error {
	return get(ctx, addr, "/metrics", func(r io.Reader) error {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, metric+"{") && !strings.HasPrefix(line, metric+" ") {
				continue
			}
			v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if err != nil {
				return fmt.Errorf("metrics line %q: %w", line, err)
			}
			out[labelValue(line, label)] += v
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("reading metrics of %s: %w", addr, err)
		}
		return nil
	})
}

// labelValue returns the value of label in a Prometheus text-format line,
// "" when the line has no such label.
func labelValue(line, label string) string {
	i := strings.Index(line, label+`="`)
	if i < 0 {
		return ""
	}
	rest := line[i+len(label)+2:]
	if j := strings.IndexByte(rest, '"'); j >= 0 {
		return rest[:j]
	}
	return ""
}

// probesSent sums relay_probes_sent_total over the relays at addrs, by
// path name.
func probesSent(ctx context.Context, addrs []string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, a := range addrs {
		if err := scrapeByLabel(ctx, a, probesSentMetric, "path", out); err != nil {
			return nil, fmt.Errorf("scraping metrics: %w", err)
		}
	}
	return out, nil
}

// sum adds up the values of m.
func sum(m map[string]float64) float64 {
	s := 0.0
	for _, v := range m {
		s += v
	}
	return s
}

// pathsUp counts the paths to its peers that are up in a relay's status.
func pathsUp(st status.Status) int {
	up := 0
	for _, p := range st.Peers {
		for _, ps := range p.Paths {
			if ps.State == status.PathUp {
				up++
			}
		}
	}
	return up
}
