package main

import (
	"flag"
	"fmt"
	"net"
	"os"

	"github.com/liqo-relay/relay/internal/control/admin"
	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/secretfile"
)

// adminFlags are the flags of the commands that talk to a running relay's
// admin server: where it is and the token it wants.
type adminFlags struct {
	addr      string
	tokenFile string
	config    string
}

func (f *adminFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.addr, "admin", "", "admin address (`HOST:PORT`) of the running relay (default admin.listen of -c, else "+config.DefaultAdmin+")")
	fs.StringVar(&f.tokenFile, "token-file", "", "`FILE` holding the admin bearer token (default admin.tokenFile of -c)")
	fs.StringVar(&f.config, "config", "", "the relay's configuration `FILE`, for its admin address and token file")
	fs.StringVar(&f.config, "c", "", "shorthand for --config")
}

// client resolves the flags into an admin client. Flags win over the
// configuration file; the file's private key is never read.
func (f *adminFlags) client() (admin.Client, error) {
	addr, tokenFile := f.addr, f.tokenFile
	if f.config != "" {
		data, err := os.ReadFile(f.config)
		if err != nil {
			return admin.Client{}, fmt.Errorf("reading config: %w", err)
		}
		cfg, err := config.Parse(data)
		if err != nil {
			return admin.Client{}, fmt.Errorf("%s: invalid configuration:\n%w", f.config, err)
		}
		if addr == "" {
			if addr, err = dialable(cfg.Admin.Listen); err != nil {
				return admin.Client{}, fmt.Errorf("%s: admin.listen: %w (use --admin)", f.config, err)
			}
		}
		if tokenFile == "" {
			tokenFile = cfg.Admin.TokenFile
		}
	}
	if addr == "" {
		addr = config.DefaultAdmin
	}
	c := admin.Client{Addr: addr}
	if tokenFile != "" {
		data, err := secretfile.Read(tokenFile)
		if err != nil {
			return admin.Client{}, fmt.Errorf("token file: %w", err)
		}
		if c.Token, err = admin.ParseToken(data); err != nil {
			return admin.Client{}, fmt.Errorf("token file %s: %w", tokenFile, err)
		}
	}
	return c, nil
}

// dialable turns a listen address into one to connect to: every address
// (empty host, 0.0.0.0 or ::) is reached on loopback.
func dialable(listen string) (string, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", err
	}
	if port == "0" {
		return "", fmt.Errorf("%q: port 0 is picked at start, so it is not known here", listen)
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return net.JoinHostPort(host, port), nil
}
