package podrunner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// eventTimeout bounds an Event's creation: events are for people, and a
// slow API server must not hold a pod's sync.
const eventTimeout = 5 * time.Second

// event records a Kubernetes Event about the pod. Failures are logged.
func (r *Runner) event(ps *podState, typ, reason, msg string) {
	pod := ps.pod
	var rb [8]byte
	_, _ = rand.Read(rb[:])
	now := metav1.NewTime(r.now())
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name + "." + hex.EncodeToString(rb[:]), Namespace: pod.Namespace},
		InvolvedObject: corev1.ObjectReference{
			Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name,
			UID: pod.UID, ResourceVersion: pod.ResourceVersion,
		},
		Reason: reason, Message: msg, Type: typ, Count: 1,
		FirstTimestamp: now, LastTimestamp: now,
		Source:              corev1.EventSource{Component: "podrunner", Host: r.cfg.Node},
		ReportingController: "podrunner", ReportingInstance: r.cfg.Node,
	}
	ctx, cancel := context.WithTimeout(context.Background(), eventTimeout)
	defer cancel()
	if _, err := r.client.CoreV1().Events(pod.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		r.log.Warn("recording an event", "pod", ps.key, "reason", reason, "err", err)
	}
	r.log.Info("event", "pod", ps.key, "type", typ, "reason", reason, "message", msg)
}

// eventOnce records an event the first time the pod sees this reason and
// message.
func (r *Runner) eventOnce(ps *podState, typ, reason, msg string) {
	k := reason + "\x00" + msg
	if ps.events[k] {
		return
	}
	ps.events[k] = true
	r.event(ps, typ, reason, msg)
}
