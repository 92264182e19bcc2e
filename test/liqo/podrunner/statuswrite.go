package podrunner

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// statusAttempts bounds the rereads after conflicts in one sync; the
// queue's rate limiter retries later.
const statusAttempts = 3

// writeStatus writes the status computed from run through the status
// subresource when it differs from pod's. On a conflict it rereads the
// pod and computes again.
func (r *Runner) writeStatus(ctx context.Context, pod *corev1.Pod, uid types.UID, run PodRun) error {
	pods := r.client.CoreV1().Pods(pod.Namespace)
	cur := pod
	for range statusAttempts {
		st := ComputeStatus(cur, run, r.now())
		if statusEqual(cur.Status, st) {
			return nil
		}
		np := cur.DeepCopy()
		np.Status = st
		_, err := pods.UpdateStatus(ctx, np, metav1.UpdateOptions{})
		if err == nil {
			return nil
		}
		if !apierrors.IsConflict(err) {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("updating the status of pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		cur, err = pods.Get(ctx, pod.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("rereading pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		if cur.UID != uid {
			return nil
		}
	}
	return fmt.Errorf("updating the status of pod %s/%s: still conflicting after %d attempts", pod.Namespace, pod.Name, statusAttempts)
}
