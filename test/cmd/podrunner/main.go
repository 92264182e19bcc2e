// Command podrunner is the Liqo test lab's kubelet stand-in: it runs the
// pods bound to one node as plain processes (see package
// test/liqo/podrunner).
//
//	podrunner run --kubeconfig K --node NAME --node-ip IP --pod-cidr CIDR \
//	    --state-dir DIR --images FILE --cluster-dns IP [--cluster-domain D]
//	podrunner exec --state-dir DIR --namespace NS --pod NAME [--container C] -- ARGV...
//	podrunner logs --state-dir DIR --namespace NS --pod NAME [--container C] [--previous]
//
// run is started inside the node's network namespace (ip netns exec).
// exec and logs stand in for kubectl exec and kubectl logs, which need a
// kubelet API the runner does not serve.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/liqo-relay/relay/test/liqo/podrunner"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

const usage = `usage:
  podrunner run --kubeconfig K --node NAME --node-ip IP --pod-cidr CIDR --state-dir DIR --images FILE --cluster-dns IP [--cluster-domain cluster.local]
  podrunner exec --state-dir DIR --namespace NS --pod NAME [--container C] -- ARGV...
  podrunner logs --state-dir DIR --namespace NS --pod NAME [--container C] [--previous]
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	args := os.Args[2:]
	switch os.Args[1] {
	case podrunner.InitCommand:
		if len(args) != 1 {
			fatal(errors.New("init: want the spec file"))
		}
		podrunner.InitMain(args[0])
	case podrunner.NsexecCommand:
		os.Exit(nsexec(args))
	case "run":
		if err := run(args); err != nil {
			fatal(err)
		}
	case "exec":
		code, err := execCmd(args)
		if err != nil {
			fatal(err)
		}
		os.Exit(code)
	case "logs":
		if err := logs(args); err != nil {
			fatal(err)
		}
	default:
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
}

func fatal(err error) {
	fmt.Fprintf(os.Stderr, "podrunner: %v\n", err)
	os.Exit(1)
}

func run(args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the cluster")
	node := fs.String("node", "", "name of the Node to register")
	nodeIP := fs.String("node-ip", "", "the node's underlay address (InternalIP, hostIP)")
	podCIDR := fs.String("pod-cidr", "", "the node's pod CIDR; cbr0 gets its first address")
	stateDir := fs.String("state-dir", "", "directory for pods' roots, volumes, logs and records")
	images := fs.String("images", "", "JSON object: image reference without tag -> entrypoint binary")
	clusterDNS := fs.String("cluster-dns", "", "nameserver of pods with dnsPolicy ClusterFirst")
	clusterDomain := fs.String("cluster-domain", "cluster.local", "the cluster's DNS domain")
	hostMountNS := fs.String("host-mount-ns", "", "mount namespace in which pod network namespaces are bound under /run/netns (default: the one of the runner's parent, ip netns exec's caller)")
	verbose := fs.Bool("v", false, "log at debug level")
	_ = fs.Parse(args)
	if fs.NArg() > 0 {
		return fmt.Errorf("run: unexpected arguments %q", fs.Args())
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	var errs []error
	ip, err := netip.ParseAddr(*nodeIP)
	if err != nil {
		errs = append(errs, fmt.Errorf("--node-ip %q: %w", *nodeIP, err))
	}
	cidr, err := netip.ParsePrefix(*podCIDR)
	if err != nil {
		errs = append(errs, fmt.Errorf("--pod-cidr %q: %w", *podCIDR, err))
	}
	var imgs podrunner.Images
	if *images != "" {
		if imgs, err = podrunner.LoadImages(*images); err != nil {
			errs = append(errs, fmt.Errorf("--images: %w", err))
		}
	}
	if *kubeconfig == "" {
		errs = append(errs, errors.New("--kubeconfig: required"))
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding the runner's binary: %w", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return fmt.Errorf("loading %s: %w", *kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	cfg.UserAgent = "podrunner/" + *node
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating the client: %w", err)
	}
	r, err := podrunner.New(podrunner.Config{
		Node: *node, NodeIP: ip, PodCIDR: cidr, StateDir: *stateDir, Images: imgs,
		ClusterDNS: *clusterDNS, ClusterDomain: *clusterDomain, HostMountNS: *hostMountNS, Self: self,
	}, client, log)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		// The first signal stops the pods and cleans up; a second one
		// exits at once.
		<-sigs
		log.Info("signal received: stopping (again to exit at once)")
		cancel()
		<-sigs
		log.Error("second signal: exiting without cleaning up")
		os.Exit(1)
	}()
	return r.Run(ctx)
}

// podFlags parses the flags exec and logs share.
type podFlags struct {
	stateDir, namespace, pod, container string
	previous                            bool
}

func parsePodFlags(name string, args []string, withPrevious bool) (*podFlags, []string, error) {
	fs := flag.NewFlagSet(name, flag.ExitOnError)
	var f podFlags
	fs.StringVar(&f.stateDir, "state-dir", "", "the runner's state directory")
	fs.StringVar(&f.namespace, "namespace", "default", "the pod's namespace")
	fs.StringVar(&f.pod, "pod", "", "the pod's name")
	fs.StringVar(&f.container, "container", "", "the container (default: the pod's first)")
	if withPrevious {
		fs.BoolVar(&f.previous, "previous", false, "print the previous run's log")
	}
	_ = fs.Parse(args)
	if f.stateDir == "" || f.pod == "" {
		return nil, nil, fmt.Errorf("%s: --state-dir and --pod are required", name)
	}
	return &f, fs.Args(), nil
}

func execCmd(args []string) (int, error) {
	f, argv, err := parsePodFlags("exec", args, false)
	if err != nil {
		return 0, err
	}
	if len(argv) == 0 {
		return 0, errors.New("exec: no command after --")
	}
	pd, c, err := podrunner.FindContainer(f.stateDir, f.namespace, f.pod, f.container)
	if err != nil {
		return 0, err
	}
	pid, err := podrunner.ContainerPID(pd, c)
	if err != nil {
		return 0, fmt.Errorf("pod %s/%s: %w", f.namespace, f.pod, err)
	}
	return podrunner.EnterContainer(pid, podrunner.SpecFile(pd, c), argv, false)
}

// nsexec is the hidden form the runner uses for exec probes and preStop
// hooks: nsexec PID SPECFILE -- ARGV.
func nsexec(args []string) int {
	if len(args) < 4 || args[2] != "--" {
		fmt.Fprintln(os.Stderr, "nsexec: want PID SPECFILE -- ARGV")
		return 2
	}
	pid, err := strconv.Atoi(args[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "nsexec: pid %q: %v\n", args[0], err)
		return 2
	}
	code, err := podrunner.EnterContainer(pid, args[1], args[3:], true)
	if err != nil {
		fmt.Fprintf(os.Stderr, "nsexec: %v\n", err)
		return 126
	}
	return code
}

func logs(args []string) error {
	f, rest, err := parsePodFlags("logs", args, true)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("logs: unexpected arguments %q", rest)
	}
	pd, c, err := podrunner.FindContainer(f.stateDir, f.namespace, f.pod, f.container)
	if err != nil {
		return err
	}
	p := podrunner.LogFile(pd, c)
	if f.previous {
		p += ".1"
	}
	lf, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("container %q: %w", c, err)
	}
	defer lf.Close()
	_, err = io.Copy(os.Stdout, lf)
	return err
}
