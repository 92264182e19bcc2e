// Command geneve-standin stands in for Liqo v1.2.0's geneve devices on a
// kernel without geneve. It makes each end of Liqo's gateway↔node tunnels
// as a vxlan device with the name, address, VNI, remote, port and MTU Liqo
// would give the geneve device, so that Liqo's own routes, which name those
// devices, work. test/liqo/GENEVE.md explains why and how.
//
// It has two roles, chosen by the first argument or, when that is a flag,
// by the name the binary runs under:
//
//	geneve-standin guest  <Liqo geneve container flags>   (or as "geneve", "liqo-geneve")
//	geneve-standin fabric <Liqo fabric flags>             (or as "fabric", "liqo-fabric")
//
// guest replaces the `geneve` container of Liqo's gateway pods (image
// ghcr.io/liqotech/gateway/geneve): it runs in the gateway pod's network
// namespace, does the container's IPC handshake with the `gateway`
// container when leader election is on, and makes the gateway ends.
//
// fabric replaces liqo-fabric (image ghcr.io/liqotech/fabric): it runs in
// the node's network namespace and runs Liqo's own source-detector,
// firewall and route controllers as liqo-fabric does, with the geneve
// controller swapped for one that makes the node ends as vxlan devices. Liqo's
// fabric binary must not run beside it (it would find a vxlan device under a
// geneve name and panic).
//
// Both take Liqo's flags unchanged, plus a few prefixed --standin-. On the
// first SIGTERM or SIGINT they stop and delete the devices they made; a
// second signal exits at once.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

const (
	roleGuest  = "guest"
	roleFabric = "fabric"
)

func main() {
	role, args, err := roleOf(os.Args)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	switch role {
	case roleGuest:
		err = runGuest(args)
	case roleFabric:
		err = runFabric(args)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "geneve-standin %s: %v\n", role, err)
		os.Exit(1)
	}
}

// roleOf picks the role from the first argument, or from the binary's name
// when the first argument is a flag or missing, and returns the remaining
// arguments.
func roleOf(argv []string) (string, []string, error) {
	if len(argv) > 1 && !strings.HasPrefix(argv[1], "-") {
		switch argv[1] {
		case roleGuest, roleFabric:
			return argv[1], argv[2:], nil
		}
		return "", nil, fmt.Errorf("unknown role %q: want %s or %s", argv[1], roleGuest, roleFabric)
	}
	name := "geneve-standin"
	if len(argv) > 0 {
		name = filepath.Base(argv[0])
	}
	switch name {
	case "geneve", "liqo-geneve":
		return roleGuest, argv[1:], nil
	case "fabric", "liqo-fabric":
		return roleFabric, argv[1:], nil
	}
	return "", nil, fmt.Errorf("usage: %s %s|%s <Liqo's flags for that container>", name, roleGuest, roleFabric)
}
