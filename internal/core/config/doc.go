// Package config parses and validates the relay's YAML configuration.
//
// It is pure: it reads bytes and returns typed, validated values, and it
// touches neither the file system nor the network. Reading the file (and the
// private key file) is the caller's job.
//
// Parse decodes strictly (unknown fields, duplicate keys and wrong types are
// errors), applies defaults and validates the result. Every problem is
// reported at once, each naming the field path where it was found, as an
// Errors value:
//
//	cfg, err := config.Parse(data)
//	var errs config.Errors
//	if errors.As(err, &errs) {
//		for _, e := range errs {
//			fmt.Println(e.Path, e.Msg)
//		}
//	}
//
// The user-facing reference of every field is docs/config.md.
package config
