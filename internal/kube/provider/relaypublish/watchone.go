package relaypublish

import (
	"context"
	"log/slog"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
)

// watchOne follows one named object: get, then watch from its resource
// version with a metadata.name field selector, and again after every
// closed watch or error, with backoff. It calls seen with the object, or
// with nil while the object does not exist, from its own goroutine (the
// caller's), until ctx is done.
func watchOne(ctx context.Context, log *slog.Logger, name string,
	get func(ctx context.Context, name string) (runtime.Object, error),
	watchFn func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error),
	seen func(runtime.Object),
) {
	backoff := wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.2, Steps: 64, Cap: 30 * time.Second}
	b := backoff
	for ctx.Err() == nil {
		obj, err := get(ctx, name)
		rv := ""
		switch {
		case err == nil:
			seen(obj)
			if m, merr := meta.Accessor(obj); merr == nil {
				rv = m.GetResourceVersion()
			}
		case apierrors.IsNotFound(err):
			seen(nil)
		default:
			log.Debug("get failed, retrying", "name", name, "err", err)
			if !sleep(ctx, b.Step()) {
				return
			}
			continue
		}
		w, err := watchFn(ctx, metav1.ListOptions{
			FieldSelector:   fields.OneTermEqualSelector("metadata.name", name).String(),
			ResourceVersion: rv,
		})
		if err != nil {
			log.Debug("watch failed, retrying", "name", name, "err", err)
			if !sleep(ctx, b.Step()) {
				return
			}
			continue
		}
		b = backoff
		drain(ctx, w, seen)
	}
}

// drain forwards the watch's events until it closes or ctx is done.
func drain(ctx context.Context, w watch.Interface, seen func(runtime.Object)) {
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
				seen(ev.Object)
			case watch.Deleted:
				seen(nil)
			case watch.Error:
				return // e.g. resource version too old: get again
			}
		}
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
