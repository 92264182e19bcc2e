package keys_test

import (
	"fmt"

	"github.com/liqo-relay/relay/internal/core/keys"
)

func ExamplePrivate_PublicKey() {
	priv, err := keys.ParsePrivate("yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=")
	if err != nil {
		panic(err)
	}
	fmt.Println(priv, priv.PublicKey())
	// Output: [redacted] HIgo9xNzJMWLKASShiTqIybxZ0U3wGLiUeJ1PKf8ykw=
}
