package webhook

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"io"
	"log/slog"
	"testing"
	"time"

	admv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func bundleCerts(t *testing.T, b []byte) []*x509.Certificate {
	t.Helper()
	var out []*x509.Certificate
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return out
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
}

// certBed is a fake API server holding the webhook configuration, and
// the directory the certificates are kept in.
type certBed struct {
	ctx context.Context
	cs  *fake.Clientset
	dir string
}

func newCertBed(t *testing.T) *certBed {
	return &certBed{ctx: context.Background(), dir: t.TempDir(), cs: fake.NewClientset(&admv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "liqo-relay-inject"},
		Webhooks:   []admv1.MutatingWebhook{{Name: "gateway.relay.liqo-relay.io"}},
	})}
}

// certs is a process's Certs over the bed (a new one is a restart).
func (b *certBed) certs() *Certs {
	return &Certs{Dir: b.dir, Hosts: append(ServiceHosts("inject", "liqo"), "127.0.0.1"), WebhookConfig: "liqo-relay-inject", Client: b.cs,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

func (b *certBed) caBundle(t *testing.T) []byte {
	w, err := b.cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(b.ctx, "liqo-relay-inject", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return w.Webhooks[0].ClientConfig.CABundle
}

// verifyLeaf checks leaf against the CAs of bundle at time at, for the
// Service's name.
func verifyLeaf(leaf *x509.Certificate, bundle []byte, at time.Time) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(bundle)
	_, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "inject.liqo.svc", CurrentTime: at})
	return err
}

func TestCertsIssueReloadRotate(t *testing.T) {
	b := newCertBed(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := b.certs()
	if err := c.Reconcile(b.ctx, t0); err != nil {
		t.Fatal(err)
	}
	first, _ := c.GetCertificate(nil)
	for _, h := range []string{"inject.liqo.svc", "127.0.0.1"} {
		if err := first.Leaf.VerifyHostname(h); err != nil {
			t.Errorf("serving certificate: %v", err)
		}
	}
	if err := verifyLeaf(first.Leaf, b.caBundle(t), t0); err != nil {
		t.Fatalf("the caBundle written does not verify the serving certificate: %v", err)
	}

	// A restart a month later keeps the same certificate.
	c2 := b.certs()
	if err := c2.Reconcile(b.ctx, t0.Add(30*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	again, _ := c2.GetCertificate(nil)
	if !again.Leaf.Equal(first.Leaf) {
		t.Error("a restart before renewal is due issued a new certificate")
	}

	at := t0.Add(ServingLifetime - renewBefore + time.Hour)
	bundle := checkRenewal(t, b, c2, first.Leaf, at)

	// Someone (helm upgrade) resets the caBundle: the next reconcile restores it.
	w, _ := b.cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(b.ctx, "liqo-relay-inject", metav1.GetOptions{})
	w.Webhooks[0].ClientConfig.CABundle = nil
	if _, err := b.cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Update(b.ctx, w, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c2.Reconcile(b.ctx, at.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.caBundle(t), bundle) {
		t.Error("caBundle not restored")
	}
}

// checkRenewal reconciles c at at, when first has less than a third of its
// life left: a new CA and certificate, and a bundle that trusts both, so
// that the old certificate (still served by another connection) and the
// new one verify. It returns the bundle.
func checkRenewal(t *testing.T, b *certBed, c *Certs, first *x509.Certificate, at time.Time) []byte {
	t.Helper()
	if !Due(first, at) {
		t.Fatal("Due = false when a third of the lifetime is left")
	}
	if err := c.Reconcile(b.ctx, at); err != nil {
		t.Fatal(err)
	}
	renewed, _ := c.GetCertificate(nil)
	if renewed.Leaf.Equal(first) {
		t.Fatal("not renewed")
	}
	bundle := b.caBundle(t)
	if n := len(bundleCerts(t, bundle)); n != 2 {
		t.Errorf("caBundle holds %d CAs, want the new and the previous", n)
	}
	if !bytes.Equal(bundle, c.CABundle()) {
		t.Error("caBundle in the API differs from the one served")
	}
	for _, leaf := range []*x509.Certificate{first, renewed.Leaf} {
		if err := verifyLeaf(leaf, bundle, at); err != nil {
			t.Errorf("after rotation: %v", err)
		}
	}
	if renewed.Leaf.NotAfter.Sub(at) < ServingLifetime-time.Hour {
		t.Errorf("renewed certificate valid until %v", renewed.Leaf.NotAfter)
	}
	return bundle
}

func TestCertsCertManagerLoadsMounted(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	ca, caKey, err := newCA(now)
	if err != nil {
		t.Fatal(err)
	}
	srv, key, err := newServing(ca, caKey, []string{"x.y.svc"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := writePair(dir, certFile, keyFile, srv, key); err != nil {
		t.Fatal(err)
	}
	c := &Certs{Dir: dir, CertManager: true, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := c.Reconcile(context.Background(), now); err != nil {
		t.Fatal(err)
	}
	got, _ := c.GetCertificate(nil)
	if !got.Leaf.Equal(srv) || c.CABundle() != nil {
		t.Error("with --cert-manager: want the mounted certificate and no caBundle of ours")
	}
}
