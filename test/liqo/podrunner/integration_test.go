package podrunner_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/testbed/netns"
	"github.com/liqo-relay/relay/test/k8s/k8stest"
	"github.com/liqo-relay/relay/test/liqo/podrunner"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

const (
	itNamespace = "prtest"
	itPodCIDR   = "10.244.7.0/24"
	itDNS       = "10.96.0.10"
)

// lab is the integration test's world: a node namespace linked to the
// host by a veth pair, an API server on the host end, and the runner in
// the node namespace.
type lab struct {
	node     *netns.NS
	nodeIP   string
	cluster  *k8stest.Cluster
	client   kubernetes.Interface
	runner   *netns.Proc
	bin      string
	images   string
	sleepBin string // the sleeper image's entrypoint
	stateDir string
}

func randHex(t *testing.T, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func startLab(t *testing.T) *lab {
	if os.Geteuid() != 0 {
		t.Skip("needs root (network namespaces, mounts): run as root, CI does")
	}
	netns.RequireRoot(t)
	k8stest.Bin(t)
	l := &lab{stateDir: t.TempDir(), bin: filepath.Join(t.TempDir(), "podrunner")}
	l.sleepBin = filepath.Join(t.TempDir(), "sleep")
	build := exec.Command("go", "build", "-o", l.bin, "./test/cmd/podrunner")
	build.Dir = k8stest.Root()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building podrunner: %v\n%s", err, out)
	}

	l.node = netns.New(t, "prnode")
	// A /30 between the host and the node, in 10.251.0.0/16.
	sub := 4 * (int(randHex(t, 1)[0]) % 60)
	hostIP := fmt.Sprintf("10.251.%d.%d", sub, 1)
	l.nodeIP = fmt.Sprintf("10.251.%d.%d", sub, 2)
	hostIf, nodeIf := "vprh"+randHex(t, 4), "vprn"+randHex(t, 4)
	run(t, "ip", "link", "add", hostIf, "type", "veth", "peer", "name", nodeIf, "netns", l.node.Name)
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", hostIf).Run() })
	run(t, "ip", "addr", "add", hostIP+"/30", "dev", hostIf)
	run(t, "ip", "link", "set", hostIf, "up")
	l.node.Run(t, "ip", "addr", "add", l.nodeIP+"/30", "dev", nodeIf)
	l.node.Run(t, "ip", "link", "set", nodeIf, "up")

	l.cluster = k8stest.Start(t, "podrunner", "", "K8S_ADDRESS="+hostIP)
	cs, err := kubernetes.NewForConfig(l.cluster.Config(t))
	if err != nil {
		t.Fatal(err)
	}
	l.client = cs

	// The sleeper image's binary lies in /tmp, which each container has
	// a tmpfs of its own over.
	tmpBin := l.sleepBin
	if b, err := os.ReadFile("/bin/sleep"); err != nil || os.WriteFile(tmpBin, b, 0o755) != nil {
		t.Fatalf("copying /bin/sleep: %v", err)
	}
	l.images = filepath.Join(t.TempDir(), "images.json")
	b, _ := json.Marshal(map[string]string{"example.com/tools/sleeper": tmpBin})
	if err := os.WriteFile(l.images, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// Runs after every runner has been killed (cleanups run last first):
	// whatever a failed test left running or bound.
	t.Cleanup(func() { l.removeLeftovers(t) })
	l.startRunner(t)
	l.cluster.Kubectl(t, "wait", "--for=condition=Ready", "node/"+l.node.Name, "--timeout=60s")
	return l
}

// removeLeftovers kills the container processes and deletes the pod
// network namespaces the state directory records, for a test that failed
// before the runner cleaned up.
func (l *lab) removeLeftovers(t *testing.T) {
	pidFiles, _ := filepath.Glob(filepath.Join(l.stateDir, "pods", "*", "*.pid"))
	for _, f := range pidFiles {
		pd, c := filepath.Dir(f), strings.TrimSuffix(filepath.Base(f), ".pid")
		if pid, err := podrunner.ContainerPID(pd, c); err == nil {
			t.Logf("killing container %s (pid %d) left by the runner", c, pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	recs, _ := filepath.Glob(filepath.Join(l.stateDir, "netns", "*"))
	for _, r := range recs {
		name := filepath.Base(r)
		if out, err := exec.Command("ip", "netns", "del", name).CombinedOutput(); err == nil {
			t.Logf("deleted netns %s left by the runner", name)
		} else if !strings.Contains(string(out), "No such file") {
			t.Errorf("ip netns del %s: %v: %s", name, err, out)
		}
	}
}

// startRunner starts a runner in the node namespace, as the lab does.
func (l *lab) startRunner(t *testing.T) {
	t.Helper()
	l.runner = l.node.Start(t, "podrunner", l.bin, "run", "--kubeconfig", l.cluster.Kubeconfig,
		"--node", l.node.Name, "--node-ip", l.nodeIP, "--pod-cidr", itPodCIDR,
		"--state-dir", l.stateDir, "--images", l.images, "--cluster-dns", itDNS, "-v")
}

func run(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// exec runs argv in container c of pod with podrunner exec and returns
// its output and exit code.
func (l *lab) exec(t *testing.T, pod, c string, argv ...string) (string, int) {
	t.Helper()
	args := append([]string{"exec", "--state-dir", l.stateDir, "--namespace", itNamespace, "--pod", pod, "--container", c, "--"}, argv...)
	out, err := exec.Command(l.bin, args...).CombinedOutput()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	case err != nil:
		t.Fatalf("podrunner exec: %v\n%s", err, out)
	}
	return string(out), 0
}

func (l *lab) sh(t *testing.T, pod, c, script string) string {
	t.Helper()
	out, code := l.exec(t, pod, c, "/bin/sh", "-c", script)
	if code != 0 {
		t.Fatalf("in %s/%s: %q exited %d:\n%s", pod, c, script, code, out)
	}
	return strings.TrimSpace(out)
}

const itPod = `apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: prtest
  labels: {app: web}
spec:
  nodeName: @NODE@
  terminationGracePeriodSeconds: 3
  initContainers:
  - name: init
    image: busybox
    command: ["/bin/sh", "-c", "echo init-ran > /data/init"]
    volumeMounts: [{name: data, mountPath: /data}]
  containers:
  - name: main
    image: busybox:1.36
    command: ["/bin/sh", "-c"]
    args:
    - trap 'echo got TERM; exit 0' TERM; echo started $(POD_NAME); echo $(POD_NAME) > /data/who; while true; do sleep 1; done
    env:
    - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
    - {name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}
    - {name: NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}
    - {name: APP, valueFrom: {fieldRef: {fieldPath: "metadata.labels['app']"}}}
    - {name: USER_NAME, valueFrom: {secretKeyRef: {name: creds, key: user}}}
    - {name: MODE, valueFrom: {configMapKeyRef: {name: cfg, key: mode}}}
    - {name: GREETING, value: "hi $(POD_NAME) $$(POD_NAME)"}
    workingDir: /data
    volumeMounts:
    - {name: data, mountPath: /data}
    - {name: creds, mountPath: /etc/creds}
    - {name: cfg, mountPath: /etc/cfg}
    - {name: cfg, mountPath: /etc/mode-only, subPath: mode}
    - {name: mem, mountPath: /mem}
    - {name: info, mountPath: /etc/podinfo}
    - {name: host, mountPath: /host, readOnly: true}
    readinessProbe:
      exec: {command: ["cat", "/data/who"]}
      periodSeconds: 1
    lifecycle:
      preStop:
        exec: {command: ["/bin/sh", "-c", "echo preStop ran > /proc/1/fd/1"]}
  - name: web
    image: busybox
    command: ["busybox", "httpd", "-f", "-p", "8080", "-h", "/data"]
    volumeMounts: [{name: data, mountPath: /data, readOnly: true}]
    readinessProbe:
      httpGet: {path: /who, port: 8080}
      periodSeconds: 1
    livenessProbe:
      tcpSocket: {port: 8080}
      periodSeconds: 1
    startupProbe:
      tcpSocket: {port: 8080}
      periodSeconds: 1
  - name: sleeper
    image: example.com/tools/sleeper:v1
    args: ["3600"]
  - name: napper
    image: example.com/tools/sleeper@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
    command: ["/usr/bin/sleeper"]
    args: ["3599"]
  volumes:
  - {name: data, emptyDir: {}}
  - {name: creds, secret: {secretName: creds}}
  - {name: cfg, configMap: {name: cfg}}
  - {name: mem, emptyDir: {medium: Memory}}
  - name: info
    downwardAPI:
      items:
      - {path: labels, fieldRef: {fieldPath: metadata.labels}}
      - {path: cpu, resourceFieldRef: {containerName: main, resource: limits.cpu}}
  - {name: host, hostPath: {path: @HOSTDIR@, type: Directory}}
`

func TestRunnerRunsAPod(t *testing.T) {
	if _, err := exec.LookPath("busybox"); err != nil {
		t.Skip("the pod's busybox containers run the host's busybox, which is not installed (apt-get install busybox, or make deps as root)")
	}
	l := startLab(t)
	c := l.cluster
	ctx := context.Background()
	c.Kubectl(t, "create", "namespace", itNamespace)
	// No controller-manager runs: create what it would.
	c.Kubectl(t, "-n", itNamespace, "create", "serviceaccount", "default")
	ca := l.cluster.Config(t).CAData
	if _, err := l.client.CoreV1().ConfigMaps(itNamespace).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-root-ca.crt"}, Data: map[string]string{"ca.crt": string(ca)}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.Kubectl(t, "-n", itNamespace, "create", "secret", "generic", "creds", "--from-literal=user=alice")
	c.Kubectl(t, "-n", itNamespace, "create", "configmap", "cfg", "--from-literal=mode=fast")
	hostDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(hostDir, "hello"), []byte("from the host"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.KubectlIn(t, strings.NewReplacer("@NODE@", l.node.Name, "@HOSTDIR@", hostDir).Replace(itPod), "apply", "-f", "-")
	if out, err := c.KubectlErr("-n", itNamespace, "wait", "--for=condition=Ready", "pod/web", "--timeout=90s"); err != nil {
		t.Fatalf("pod not ready: %v\n%s\n%s", err, out, c.Kubectl(t, "-n", itNamespace, "get", "pod", "web", "-o", "yaml"))
	}
	pod, err := l.client.CoreV1().Pods(itNamespace).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	podIP := pod.Status.PodIP
	t.Logf("pod web is Ready with IP %s", podIP)

	// Status.
	if pod.Status.Phase != corev1.PodRunning || !strings.HasPrefix(podIP, "10.244.7.") || pod.Status.HostIP != l.nodeIP {
		t.Errorf("phase %s podIP %s hostIP %s", pod.Status.Phase, podIP, pod.Status.HostIP)
	}
	if ics := pod.Status.InitContainerStatuses; len(ics) != 1 || ics[0].State.Terminated == nil || ics[0].State.Terminated.Reason != "Completed" {
		t.Errorf("init container status %+v", ics)
	}
	pids := l.containerPIDs(t, pod)
	nsName := podrunner.PodNetnsName(pod.UID)
	if !strings.Contains(run(t, "ip", "netns", "list"), nsName) {
		t.Errorf("netns %s is not visible to ip netns on the host", nsName)
	}

	// What the processes see.
	for _, tc := range []struct{ script, want string }{
		{"cat /data/who /data/init", "web\ninit-ran"},
		{"pwd", "/data"},
		{"stat -f -c %T /mem", "tmpfs"},
		{"cat /etc/podinfo/labels /etc/podinfo/cpu", fmt.Sprintf("app=\"web\"\n%d", runtime.NumCPU())},
		{"cat /host/hello; echo; touch /host/x 2>/dev/null || echo read-only", "from the host\nread-only"},
		{"cat /etc/creds/user; echo; cat /etc/cfg/mode; echo; cat /etc/mode-only", "alice\nfast\nfast"},
		{"echo $POD_NAME $POD_IP $NODE $APP $USER_NAME $MODE", fmt.Sprintf("web %s %s web alice fast", podIP, l.node.Name)},
		{"echo $GREETING", "hi web $(POD_NAME)"},
		{"echo $HOSTNAME $(hostname) $(cat /etc/hostname)", "web web web"},
		{"echo $KUBERNETES_SERVICE_HOST $KUBERNETES_SERVICE_PORT", "10.96.0.1 443"},
		{"cat /var/run/secrets/kubernetes.io/serviceaccount/namespace", itNamespace},
		{"test -s /var/run/secrets/kubernetes.io/serviceaccount/token && echo token", "token"},
		{"grep -c 'BEGIN CERTIFICATE' /var/run/secrets/kubernetes.io/serviceaccount/ca.crt", "1"},
		{"grep nameserver /etc/resolv.conf; grep search /etc/resolv.conf", "nameserver " + itDNS + "\nsearch prtest.svc.cluster.local svc.cluster.local cluster.local"},
		{"grep -w web /etc/hosts", podIP + "\tweb"},
		{"ls /sys/class/net | sort | tr '\\n' ' '", "eth0 lo"},
		{"ip -4 -o addr show dev eth0 | awk '{print $4}'", podIP + "/32"},
		{"ip route show default", "default via 10.244.7.1 dev eth0"},
		{"test $$ -lt 100 && echo own-pid-namespace", "own-pid-namespace"},
		{"touch /etc/podrunner-was-here && ls /etc/podrunner-was-here", "/etc/podrunner-was-here"},
		{"touch /etc/creds/x 2>/dev/null || echo read-only", "read-only"},
		{"wget -q -O - http://127.0.0.1:8080/who", "web"}, // the pod's containers share its network namespace
	} {
		if got := l.sh(t, "web", "main", tc.script); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.script, got, tc.want)
		}
	}
	if got := l.sh(t, "web", "main", "wget -q -O - http://"+podIP+":8080/who"); got != "web" {
		t.Errorf("the web container over the pod network: %q", got)
	}
	if _, err := os.Stat("/etc/podrunner-was-here"); err == nil {
		os.Remove("/etc/podrunner-was-here")
		t.Error("a write in the container reached the host's /etc")
	}
	if out, code := l.exec(t, "web", "main", "/bin/sh", "-c", "exit 7"); code != 7 {
		t.Errorf("exit status: %d (%s), want 7", code, out)
	}
	if got := l.sh(t, "web", "sleeper", "cat /proc/1/cmdline | tr '\\0' ' '"); got != l.sleepBin+" 3600" {
		t.Errorf("the image's entrypoint: %q", got)
	}
	if got := l.sh(t, "web", "napper", "cat /proc/1/cmdline | tr '\\0' ' '"); got != l.sleepBin+" 3599" {
		t.Errorf("a command naming the image's program: %q", got)
	}
	logs, err := exec.Command(l.bin, "logs", "--state-dir", l.stateDir, "--namespace", itNamespace, "--pod", "web", "--container", "main").CombinedOutput()
	if err != nil || !strings.Contains(string(logs), "started web") {
		t.Errorf("podrunner logs: %v\n%s", err, logs)
	}

	// A Secret's change reaches the volume.
	c.KubectlIn(t, "apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: prtest}\nstringData: {user: bob}\n", "apply", "-f", "-")
	deadline := time.Now().Add(30 * time.Second)
	for l.sh(t, "web", "main", "cat /etc/creds/user") != "bob" {
		if time.Now().After(deadline) {
			t.Fatal("the secret volume still says the old value after 30 s")
		}
		time.Sleep(200 * time.Millisecond) // real: the runner's informer delivers the Secret's update when it does
	}

	// An unsupported pod waits, says why, and gets an Event.
	c.KubectlIn(t, `apiVersion: v1
kind: Pod
metadata: {name: pvc, namespace: prtest}
spec:
  nodeName: `+l.node.Name+`
  containers: [{name: c, image: busybox, command: ["true"], volumeMounts: [{name: data, mountPath: /d}]}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: nope}}]
`, "apply", "-f", "-")
	if out, err := c.KubectlErr("-n", itNamespace, "wait", "--for=jsonpath={.status.containerStatuses[0].state.waiting.reason}=Unsupported", "pod/pvc", "--timeout=30s"); err != nil {
		t.Errorf("unsupported pod: %v\n%s", err, out)
	}
	if out := c.Kubectl(t, "-n", itNamespace, "get", "events", "--field-selector", "reason=Unsupported", "-o", "jsonpath={.items[*].message}"); !strings.Contains(out, `persistentVolumeClaim volumes are not supported by the pod runner`) {
		t.Errorf("events: %q", out)
	}

	// Restarts: a crashing container is restarted and its previous log
	// kept; a pod whose containers have all exited under restartPolicy
	// Never succeeds and loses its network namespace.
	c.KubectlIn(t, `apiVersion: v1
kind: Pod
metadata: {name: crash, namespace: prtest}
spec:
  nodeName: `+l.node.Name+`
  containers: [{name: c, image: busybox, command: ["/bin/sh", "-c", "echo crashing; exit 3"]}]
---
apiVersion: v1
kind: Pod
metadata: {name: done, namespace: prtest}
spec:
  nodeName: `+l.node.Name+`
  restartPolicy: Never
  containers: [{name: c, image: busybox, command: ["/bin/sh", "-c", "exit 0"]}]
`, "apply", "-f", "-")
	c.Kubectl(t, "-n", itNamespace, "wait", "--for=jsonpath={.status.phase}=Succeeded", "pod/done", "--timeout=30s")
	c.Kubectl(t, "-n", itNamespace, "wait", "--for=jsonpath={.status.containerStatuses[0].lastState.terminated.exitCode}=3", "pod/crash", "--timeout=30s")
	crash, err := l.client.CoreV1().Pods(itNamespace).Get(ctx, "crash", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cs := crash.Status.ContainerStatuses[0]; cs.RestartCount < 1 || crash.Status.Phase != corev1.PodRunning {
		t.Errorf("crash: phase %s, status %+v", crash.Status.Phase, cs)
	}
	if m, _ := filepath.Glob(filepath.Join(l.stateDir, "pods", itNamespace+"_crash_*", "c.log.1")); len(m) != 1 {
		t.Errorf("crash: the previous run's log is not kept: %v", m)
	}
	done, err := l.client.CoreV1().Pods(itNamespace).Get(ctx, "done", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(run(t, "ip", "netns", "list"), podrunner.PodNetnsName(done.UID)) {
		t.Error("a Succeeded pod keeps its network namespace")
	}

	// A runner that dies leaves its containers running; the next one kills
	// them and recreates the pod, with the same address when it is free.
	if err := l.runner.Stop(syscall.SIGKILL); err != nil {
		t.Errorf("runner: %v", err)
	}
	for name, pid := range pids {
		if err := syscall.Kill(pid, 0); err != nil {
			t.Errorf("container %s died with the runner: %v", name, err)
		}
	}
	l.startRunner(t)
	deadline = time.Now().Add(60 * time.Second)
	for {
		pod, err = l.client.CoreV1().Pods(itNamespace).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ready(pod) && pod.Status.ContainerStatuses[0].ContainerID != fmt.Sprintf("podrunner://%d", pids["main"]) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod web not recreated by the new runner after 60 s: %+v", pod.Status)
		}
		time.Sleep(200 * time.Millisecond) // real: a real API server takes the new runner's status write
	}
	for name, pid := range pids {
		if err := syscall.Kill(pid, 0); err == nil {
			t.Errorf("container %s of the earlier runner (pid %d) still runs", name, pid)
		}
	}
	if pod.Status.PodIP != podIP {
		t.Errorf("pod IP %s after the restart, was %s", pod.Status.PodIP, podIP)
	}
	pids = l.containerPIDs(t, pod)
	if got := l.sh(t, "web", "main", "cat /data/init"); got != "init-ran" {
		t.Errorf("after the restart: %q", got)
	}

	// Deletion: everything goes.
	c.Kubectl(t, "-n", itNamespace, "delete", "pod", "web", "pvc", "crash", "done", "--timeout=60s")
	if strings.Contains(run(t, "ip", "netns", "list"), nsName) {
		t.Errorf("netns %s is left", nsName)
	}
	if out := l.node.Run(t, "ip", "-o", "link", "show"); strings.Contains(out, "vlp") {
		t.Errorf("a veth is left:\n%s", out)
	}
	for name, pid := range pids {
		if err := syscall.Kill(pid, 0); err == nil {
			t.Errorf("the process of container %s (pid %d) is left", name, pid)
		}
	}
	checkNoMounts(t, l.stateDir, l.runner.Pid())
	if got, err := os.ReadFile(logFile(t, l.stateDir, "main")); err != nil || !strings.Contains(string(got), "preStop ran\ngot TERM") {
		t.Errorf("main's log does not say its preStop hook ran, then it got SIGTERM: %v\n%s", err, got)
	}

	// The runner's own shutdown removes the bridge.
	if err := l.runner.Stop(syscall.SIGTERM); err != nil {
		t.Errorf("runner: %v", err)
	}
	if out := l.node.Run(t, "ip", "-o", "link", "show"); strings.Contains(out, podrunner.BridgeName) {
		t.Errorf("the bridge is left:\n%s", out)
	}
	if recs, _ := filepath.Glob(filepath.Join(l.stateDir, "netns", "*")); len(recs) > 0 {
		t.Errorf("netns records left: %v", recs)
	}
	if testing.Verbose() {
		t.Logf("runner output:\n%s", l.runner.Output())
	}
}

// containerPIDs checks that pod's containers run, are ready and have the
// PIDs their status says, and returns the PIDs by container.
func (l *lab) containerPIDs(t *testing.T, pod *corev1.Pod) map[string]int {
	t.Helper()
	pids := map[string]int{}
	for _, cs := range pod.Status.ContainerStatuses {
		if !cs.Ready || cs.State.Running == nil || !strings.HasPrefix(cs.ContainerID, "podrunner://") {
			t.Errorf("container %s: %+v", cs.Name, cs)
		}
		pd, name, err := podrunner.FindContainer(l.stateDir, itNamespace, pod.Name, cs.Name)
		if err != nil {
			t.Fatal(err)
		}
		pid, err := podrunner.ContainerPID(pd, name)
		if err != nil || "podrunner://"+fmt.Sprint(pid) != cs.ContainerID {
			t.Errorf("container %s: pid %d (%v), status says %s", cs.Name, pid, err, cs.ContainerID)
		}
		pids[cs.Name] = pid
	}
	return pids
}

func ready(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func logFile(t *testing.T, stateDir, c string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(stateDir, "pods", itNamespace+"_web_*", c+".log"))
	if len(m) != 1 {
		t.Fatalf("log of %s: %v", c, m)
	}
	return m[0]
}

// checkNoMounts fails the test when a mount below dir is left in the
// host's mount namespace or in the runner's (pid).
func checkNoMounts(t *testing.T, dir string, pid int) {
	t.Helper()
	for _, f := range []string{"/proc/self/mountinfo", fmt.Sprintf("/proc/%d/mountinfo", pid)} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Errorf("reading %s: %v", f, err)
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if fields := strings.Fields(line); len(fields) > 4 && strings.HasPrefix(fields[4], dir) {
				t.Errorf("%s: mount left: %s", f, line)
			}
		}
	}
}
