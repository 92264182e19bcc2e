package config_test

import (
	"errors"
	"fmt"

	"github.com/liqo-relay/relay/internal/core/config"
)

func ExampleParse() {
	_, err := config.Parse([]byte(`
name: provider-a
privateKeyFile: /etc/relay/key
addresses: [100.80.0.1/32]
listenPort: abc
peers:
  - name: provider-b
    publicKey: HIgo9xNzJMWLKASShiTqIybxZ0U3wGLiUeJ1PKf8ykw=
    prefixes: [10.72.0.0/16]
    paths: [{name: direct, endpoint: foo}]
`))
	var errs config.Errors
	if errors.As(err, &errs) {
		for _, e := range errs {
			fmt.Printf("%s -> %s\n", e.Path, e.Msg)
		}
	}
	// Output:
	// listenPort -> "abc" is not a port (1..65535)
	// peers[0].paths[0].endpoint -> "foo" is not host:port
}
