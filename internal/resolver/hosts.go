package resolver

import (
	"bufio"
	"bytes"
	"fmt"
	"net/netip"
	"os"
	"strings"
)

// DefaultHostsPath is where a pod's hostAliases and the host's static
// names are.
const DefaultHostsPath = "/etc/hosts"

// lookupHosts returns the addresses the hosts file at path gives name, in
// file order. A missing file holds no names.
func lookupHosts(path, name string) ([]netip.Addr, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading hosts file: %w", err)
	}
	return parseHosts(data, name), nil
}

// parseHosts finds name (case-insensitive, with or without its final dot)
// in hosts(5) text.
func parseHosts(data []byte, name string) []netip.Addr {
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	var out []netip.Addr
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		ip, err := netip.ParseAddr(f[0])
		if err != nil || ip.Zone() != "" {
			continue
		}
		for _, h := range f[1:] {
			if strings.ToLower(strings.TrimSuffix(h, ".")) == name {
				out = append(out, ip.Unmap())
				break
			}
		}
	}
	return out
}
