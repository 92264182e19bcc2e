package podrunner

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// tokenRefreshFraction is the share of a token's lifetime after which the
// runner replaces it: the kubelet's 80 %, which leaves a client a fifth
// of the lifetime to reread the file.
const tokenRefreshFraction = 0.8

// tokenKey identifies one projected token of a pod.
type tokenKey struct {
	audience   string
	expiration int64
}

type cachedToken struct {
	token     string
	refreshAt time.Time
}

// tokenCache holds a pod's service account tokens, requested with the
// TokenRequest API and bound to the pod. It is used under its pod's lock.
type tokenCache struct {
	client kubernetes.Interface
	tokens map[tokenKey]cachedToken
}

func newTokenCache(client kubernetes.Interface) *tokenCache {
	return &tokenCache{client: client, tokens: map[tokenKey]cachedToken{}}
}

// get returns a token of pod's service account for audience, requesting a
// new one when none is cached or the cached one is due for refresh at now.
func (c *tokenCache) get(ctx context.Context, pod *corev1.Pod, audience string, expiration int64, now time.Time) (string, error) {
	k := tokenKey{audience, expiration}
	if t, ok := c.tokens[k]; ok && now.Before(t.refreshAt) {
		return t.token, nil
	}
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: &expiration,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}}
	if audience != "" {
		req.Spec.Audiences = []string{audience}
	}
	resp, err := c.client.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, sa, req, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("requesting a token of service account %s/%s: %w", pod.Namespace, sa, err)
	}
	exp := resp.Status.ExpirationTimestamp.Time
	if exp.IsZero() {
		exp = now.Add(time.Duration(expiration) * time.Second)
	}
	refresh := now.Add(time.Duration(float64(exp.Sub(now)) * tokenRefreshFraction))
	c.tokens[k] = cachedToken{token: resp.Status.Token, refreshAt: refresh}
	return resp.Status.Token, nil
}

// nextRefresh is the earliest time a cached token is due, or zero.
func (c *tokenCache) nextRefresh() time.Time {
	var t time.Time
	for _, tok := range c.tokens {
		if t.IsZero() || tok.refreshAt.Before(t) {
			t = tok.refreshAt
		}
	}
	return t
}
