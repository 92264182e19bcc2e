package webhook

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Lifetimes of the webhook's own certificates. The serving certificate is
// renewed when a third of its life is left, so that a webhook that was
// down for days still renews long before expiry; the CA lives longer than
// any serving certificate it signs and is renewed with it when less than
// a serving lifetime is left.
const (
	CALifetime      = 365 * 24 * time.Hour
	ServingLifetime = 90 * 24 * time.Hour
	renewBefore     = ServingLifetime / 3
)

// File names in --cert-dir (those of a kubernetes.io/tls Secret, so that
// cert-manager's Secret can be mounted there).
const (
	certFile   = "tls.crt"
	keyFile    = "tls.key"
	caCertFile = "ca.crt"
	caKeyFile  = "ca.key"
)

// Certs serves the webhook's TLS certificate. Self-managed, it keeps a CA
// and a serving certificate in Dir and writes the CA to the caBundle of
// the MutatingWebhookConfiguration; with CertManager it only loads what
// cert-manager mounted in Dir (tls.crt, tls.key).
type Certs struct {
	Dir string
	// Hosts are the serving certificate's DNS names and IP addresses.
	Hosts         []string
	CertManager   bool
	WebhookConfig string
	Client        kubernetes.Interface
	Log           *slog.Logger
	Metrics       *Metrics

	mu      sync.RWMutex
	current *tls.Certificate
	caPEM   []byte // the CA bundle to publish: the current CA, then the previous one
	loaded  time.Time
}

// ServiceHosts are the names the API server uses for a webhook Service.
func ServiceHosts(service, namespace string) []string {
	return []string{service, service + "." + namespace, service + "." + namespace + ".svc", service + "." + namespace + ".svc.cluster.local"}
}

// GetCertificate is tls.Config.GetCertificate.
func (c *Certs) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.current == nil {
		return nil, errors.New("no serving certificate yet")
	}
	return c.current, nil
}

// Ready reports whether a certificate is loaded.
func (c *Certs) Ready() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.current != nil
}

// CABundle is the PEM the caBundle holds (self-managed only).
func (c *Certs) CABundle() []byte {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return bytes.Clone(c.caPEM)
}

// Reconcile makes the certificates good at now: loads them, renews what
// is due, and (self-managed) writes the caBundle when it differs. It is
// called at start and then periodically.
func (c *Certs) Reconcile(ctx context.Context, now time.Time) error {
	if c.CertManager {
		return c.loadMounted()
	}
	if err := c.ensureSelfSigned(now); err != nil {
		return err
	}
	if c.WebhookConfig == "" || c.Client == nil {
		return nil
	}
	return c.writeCABundle(ctx)
}

// loadMounted (re)loads tls.crt and tls.key when they changed.
func (c *Certs) loadMounted() error {
	st, err := os.Stat(filepath.Join(c.Dir, certFile))
	if err != nil {
		return fmt.Errorf("--cert-manager: %w", err)
	}
	c.mu.RLock()
	same := c.current != nil && st.ModTime().Equal(c.loaded)
	c.mu.RUnlock()
	if same {
		return nil
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(c.Dir, certFile), filepath.Join(c.Dir, keyFile))
	if err != nil {
		return fmt.Errorf("--cert-manager: loading %s: %w", c.Dir, err)
	}
	c.set(&pair, nil, st.ModTime())
	c.Log.Info("serving certificate loaded", "dir", c.Dir, "notAfter", pair.Leaf.NotAfter)
	return nil
}

func (c *Certs) set(pair *tls.Certificate, caPEM []byte, loaded time.Time) {
	c.mu.Lock()
	c.current, c.loaded = pair, loaded
	if caPEM != nil {
		c.caPEM = caPEM
	}
	c.mu.Unlock()
	if c.Metrics != nil && pair.Leaf != nil {
		c.Metrics.certNotAfter.Set(float64(pair.Leaf.NotAfter.Unix()))
	}
}

// ensureSelfSigned loads the CA and serving certificate from Dir and
// replaces them when missing, unreadable, not for Hosts, or due.
func (c *Certs) ensureSelfSigned(now time.Time) error {
	ca, _, caErr := loadPair(filepath.Join(c.Dir, caCertFile), filepath.Join(c.Dir, caKeyFile))
	srv, srvKey, srvErr := loadPair(filepath.Join(c.Dir, certFile), filepath.Join(c.Dir, keyFile))
	reason := ""
	switch {
	case caErr != nil:
		reason = "no usable CA: " + caErr.Error()
	case srvErr != nil:
		reason = "no usable serving certificate: " + srvErr.Error()
	case srv.CheckSignatureFrom(ca) != nil:
		reason = "the serving certificate is not signed by the CA"
	case Due(srv, now) || ca.NotAfter.Sub(now) < ServingLifetime:
		reason = fmt.Sprintf("renewal due (serving certificate valid until %s, CA until %s)", srv.NotAfter.UTC().Format(time.RFC3339), ca.NotAfter.UTC().Format(time.RFC3339))
	case !coversHosts(srv, c.Hosts):
		reason = fmt.Sprintf("the serving certificate does not cover %v", c.Hosts)
	}
	var previous *x509.Certificate
	if reason != "" {
		if caErr == nil && ca.NotAfter.After(now) {
			previous = ca // still trusted during the switch
		}
		c.Log.Info("issuing a new CA and serving certificate", "reason", reason, "dir", c.Dir)
		var caKey *ecdsa.PrivateKey
		var err error
		if ca, caKey, err = newCA(now); err != nil {
			return err
		}
		if srv, srvKey, err = newServing(ca, caKey, c.Hosts, now); err != nil {
			return err
		}
		if err := writePair(c.Dir, caCertFile, caKeyFile, ca, caKey); err != nil {
			return err
		}
		if err := writePair(c.Dir, certFile, keyFile, srv, srvKey); err != nil {
			return err
		}
	} else {
		c.mu.RLock()
		same := c.current != nil && c.current.Leaf != nil && c.current.Leaf.Equal(srv)
		c.mu.RUnlock()
		if same {
			return nil
		}
	}
	bundle := pemCert(ca)
	if previous != nil {
		bundle = append(bundle, pemCert(previous)...)
	}
	pair := &tls.Certificate{Certificate: [][]byte{srv.Raw}, PrivateKey: srvKey, Leaf: srv}
	// The new CA must be in the caBundle before the new certificate is
	// served: write it first when we have a client, then switch.
	c.mu.Lock()
	c.caPEM = bundle
	c.mu.Unlock()
	if c.WebhookConfig != "" && c.Client != nil {
		if err := c.writeCABundle(context.Background()); err != nil {
			if c.Ready() {
				// Keep serving the certificate the published caBundle
				// trusts; the next Reconcile retries (the new pair is
				// in Dir now, so the retry switches once written).
				return err
			}
			c.set(pair, nil, now) // nothing served yet: serve, and retry the caBundle
			return err
		}
	}
	c.set(pair, nil, now)
	return nil
}

// Due reports whether a serving certificate must be renewed at now.
func Due(cert *x509.Certificate, now time.Time) bool {
	return cert.NotAfter.Sub(now) < renewBefore || now.Before(cert.NotBefore)
}

func coversHosts(cert *x509.Certificate, hosts []string) bool {
	for _, h := range hosts {
		if cert.VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}

// writeCABundle sets every webhook's clientConfig.caBundle of the
// MutatingWebhookConfiguration to the CA bundle, when it differs.
func (c *Certs) writeCABundle(ctx context.Context) error {
	bundle := c.CABundle()
	api := c.Client.AdmissionregistrationV1().MutatingWebhookConfigurations()
	cfg, err := api.Get(ctx, c.WebhookConfig, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading MutatingWebhookConfiguration %s: %w", c.WebhookConfig, err)
	}
	changed := false
	for i := range cfg.Webhooks {
		if !bytes.Equal(cfg.Webhooks[i].ClientConfig.CABundle, bundle) {
			cfg.Webhooks[i].ClientConfig.CABundle = bundle
			changed = true
		}
	}
	if !changed {
		return nil
	}
	if _, err := api.Update(ctx, cfg, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("writing the caBundle of MutatingWebhookConfiguration %s: %w", c.WebhookConfig, err)
	}
	c.Log.Info("caBundle written", "webhookConfiguration", c.WebhookConfig, "webhooks", len(cfg.Webhooks))
	return nil
}

func newCA(now time.Time) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	return issue(&x509.Certificate{
		Subject:               pkix.Name{CommonName: "liqo-relay-inject-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(CALifetime),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}, nil, nil)
}

func newServing(ca *x509.Certificate, caKey *ecdsa.PrivateKey, hosts []string, now time.Time) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "liqo-relay-inject"},
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.Add(ServingLifetime),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return issue(tmpl, ca, caKey)
}

// issue signs tmpl with parent (self-signed when parent is nil).
func issue(tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating a key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, nil, fmt.Errorf("generating a serial number: %w", err)
	}
	tmpl.SerialNumber = serial
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, nil, fmt.Errorf("signing %s: %w", tmpl.Subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

func pemCert(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

func loadPair(certPath, keyPath string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	pair, err := tls.LoadX509KeyPair(certPath, keyPath)
	if err != nil {
		return nil, nil, err
	}
	key, ok := pair.PrivateKey.(*ecdsa.PrivateKey)
	if !ok {
		return nil, nil, fmt.Errorf("%s: not an ECDSA key", keyPath)
	}
	return pair.Leaf, key, nil
}

// writePair writes a certificate and its key (0600), each through a
// temporary file renamed into place.
func writePair(dir, certName, keyName string, cert *x509.Certificate, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("encoding a key: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("--cert-dir: %w", err)
	}
	for _, f := range []struct {
		name string
		data []byte
	}{
		{keyName, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})},
		{certName, pemCert(cert)},
	} {
		tmp := filepath.Join(dir, "."+f.name+".tmp")
		if err := os.WriteFile(tmp, f.data, 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", tmp, err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, f.name)); err != nil {
			return fmt.Errorf("writing %s: %w", f.name, err)
		}
	}
	return nil
}
