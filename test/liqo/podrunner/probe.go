package podrunner

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// probeKind names a probe as the kubelet's events do.
type probeKind string

const (
	probeLiveness  probeKind = "Liveness"
	probeReadiness probeKind = "Readiness"
	probeStartup   probeKind = "Startup"
)

// prober runs one probe of one container run.
type prober struct {
	kind      probeKind
	probe     *corev1.Probe
	container *corev1.Container
	host      string // the pod's IP
	// exec runs argv in the container (httpGet and tcpSocket probes run
	// from the node's namespace, as the kubelet's do).
	exec func(ctx context.Context, argv []string) error
}

// run probes until ctx ends, after the initial delay and then every
// period, passing each outcome to observe. It returns when observe
// returns false.
func (p *prober) run(ctx context.Context, observe func(ok bool, msg string) bool) {
	delay := time.Duration(p.probe.InitialDelaySeconds) * time.Second
	period := time.Duration(max(p.probe.PeriodSeconds, 1)) * time.Second
	t := time.NewTimer(delay)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		msg := p.once(ctx)
		if ctx.Err() != nil || !observe(msg == "", msg) {
			return
		}
		t.Reset(period)
	}
}

// once runs the probe and returns "" on success, else why it failed.
func (p *prober) once(ctx context.Context) string {
	timeout := time.Duration(max(p.probe.TimeoutSeconds, 1)) * time.Second
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	h := p.probe.ProbeHandler
	switch {
	case h.Exec != nil:
		if err := p.exec(ctx, h.Exec.Command); err != nil {
			return fmt.Sprintf("exec %q: %v", h.Exec.Command, err)
		}
		return ""
	case h.HTTPGet != nil:
		return p.httpGet(ctx, h.HTTPGet)
	case h.GRPC != nil:
		host := p.host
		service := ""
		if h.GRPC.Service != nil {
			service = *h.GRPC.Service
		}
		return grpcCheck(ctx, host, int(h.GRPC.Port), service)
	case h.TCPSocket != nil:
		port, err := resolvePort(h.TCPSocket.Port, p.container)
		if err != nil {
			return err.Error()
		}
		host := h.TCPSocket.Host
		if host == "" {
			host = p.host
		}
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			return fmt.Sprintf("dial tcp %s: %v", net.JoinHostPort(host, strconv.Itoa(port)), err)
		}
		c.Close()
		return ""
	}
	return "probe has no handler"
}

func (p *prober) httpGet(ctx context.Context, g *corev1.HTTPGetAction) string {
	port, err := resolvePort(g.Port, p.container)
	if err != nil {
		return err.Error()
	}
	host := g.Host
	if host == "" {
		host = p.host
	}
	scheme := strings.ToLower(string(g.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	path := g.Path
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	url := fmt.Sprintf("%s://%s%s", scheme, net.JoinHostPort(host, strconv.Itoa(port)), path)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err.Error()
	}
	req.Header.Set("User-Agent", "kube-probe/podrunner")
	for _, hd := range g.HTTPHeaders {
		if strings.EqualFold(hd.Name, "Host") {
			req.Host = hd.Value
		} else {
			req.Header.Add(hd.Name, hd.Value)
		}
	}
	client := &http.Client{
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true},
		// A redirect counts as success, as the kubelet counts one to
		// another host.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Sprintf("GET %s: %v", url, err)
	}
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 400 {
		return fmt.Sprintf("GET %s: HTTP status %d", url, resp.StatusCode)
	}
	return ""
}

// resolvePort turns a probe's port (a number or the name of one of the
// container's ports) into a number.
func resolvePort(port intstr.IntOrString, c *corev1.Container) (int, error) {
	if port.Type == intstr.Int {
		return port.IntValue(), nil
	}
	for _, p := range c.Ports {
		if p.Name == port.StrVal {
			return int(p.ContainerPort), nil
		}
	}
	if n, err := strconv.Atoi(port.StrVal); err == nil {
		return n, nil
	}
	return 0, fmt.Errorf("container %q has no port named %q", c.Name, port.StrVal)
}

// execInContainer runs argv in the container whose process is pid with the
// runner's hidden nsexec subcommand.
func execInContainer(ctx context.Context, self string, pid int, specPath string, argv []string) error {
	args := append([]string{NsexecCommand, strconv.Itoa(pid), specPath, "--"}, argv...)
	cmd := exec.CommandContext(ctx, self, args...)
	// At the deadline nsexec kills the command it runs in the container,
	// then exits: killing nsexec itself would leave the command running.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = nsexecWaitDelay
	out, err := cmd.CombinedOutput()
	if err != nil {
		if len(out) > 0 {
			return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(out)))
		}
		return err
	}
	return nil
}

// nsexecWaitDelay is how long a timed-out exec probe's nsexec has to kill
// its command and exit before it is killed itself.
const nsexecWaitDelay = 2 * time.Second

// NsexecCommand is the hidden subcommand that runs a command in a
// container: nsexec PID SPECFILE -- ARGV (see Enter).
const NsexecCommand = "nsexec"
