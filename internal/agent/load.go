package agent

import (
	"fmt"
	"os"

	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/keys"
	"github.com/liqo-relay/relay/internal/secretfile"
)

// LoadFile reads and validates a configuration file and resolves its private
// key (from privateKey or privateKeyFile). The returned error lists every
// problem found, each naming its field path.
func LoadFile(path string) (*config.Config, error) {
	cfg, err := ParseFile(path)
	if err != nil {
		return nil, err
	}
	if err := ResolveKey(cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// ParseFile reads and validates a configuration file without resolving its
// private key: in Kubernetes mode the caller reads it from privateKeySecret
// (config.SetKeyFromSecret), then calls ResolveKey.
func ParseFile(path string) (*config.Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	cfg, err := config.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: invalid configuration:\n%w", path, err)
	}
	return cfg, nil
}

// ResolveKey fills cfg.PrivateKey from cfg.PrivateKeyFile when the key is
// kept in a file, and checks that it is not one of the peers' keys. The
// file must pass secretfile.Read: a regular file (after symbolic links)
// that group and others cannot read, of at most 4 KiB.
func ResolveKey(cfg *config.Config) error {
	if !cfg.PrivateKeySecret.IsZero() && cfg.PrivateKey.IsZero() {
		return fmt.Errorf("privateKeySecret: the key is kept in the Kubernetes Secret %q: run the relay in Kubernetes mode (relay run --kubeconfig, or in a pod)", cfg.PrivateKeySecret.Name)
	}
	if cfg.PrivateKeyFile != "" {
		data, err := secretfile.Read(cfg.PrivateKeyFile)
		if err != nil {
			return fmt.Errorf("privateKeyFile: %w", err)
		}
		k, err := keys.ParsePrivate(string(data))
		clear(data)
		if err != nil {
			return fmt.Errorf("privateKeyFile: %s: %w", cfg.PrivateKeyFile, err)
		}
		cfg.PrivateKey = k
	}
	return cfg.CheckPrivateKey(cfg.PrivateKey)
}
