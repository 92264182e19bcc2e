package trace

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/liqo-relay/relay/internal/core/keys"
)

// A script is one command per line; # starts a comment. Commands:
//
//	relay priv=N [interval=D] [redundancy=MODE]  our relay (first line)
//	peer NAME priv=N [next=M]                     a peer (key from seed N, staged next key from seed M)
//	path PEER NAME RTT [bias=D]                   one of its paths
//	run D                                         let D pass
//	cut PEER PATH / restore PEER PATH             the path drops all / carries again
//	traffic PEER on|off                           data over the peer's paths
//	stall D                                       the relay cannot run for D
//	stage priv=N [deadline=D]                     our next key
//	staged PEER                                   the peer proved our next key
//	session PEER                                  the peer's handshake made a session
//	notice PEER                                   the peer switched to its next key (its request under it arrived)
//	failswitch                                    the relay's next switch to its own next key fails
//
// Keys are derived from their seed N (KeyOf), so both drivers of a trace
// see the same keys; the relay with the smaller public key initiates.

// command is one parsed line.
type command struct {
	line int
	verb string
	args []string
	opts map[string]string
}

// parse splits a script into commands.
func parse(script string) ([]command, error) {
	var out []command
	for i, raw := range strings.Split(script, "\n") {
		text, _, _ := strings.Cut(raw, "#")
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		c := command{line: i + 1, verb: f[0], opts: map[string]string{}}
		for _, w := range f[1:] {
			if k, v, ok := strings.Cut(w, "="); ok {
				c.opts[k] = v
			} else {
				c.args = append(c.args, w)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// errorf is an error naming the command's line.
func (c command) errorf(format string, a ...any) error {
	return fmt.Errorf("line %d (%s): %s", c.line, c.verb, fmt.Sprintf(format, a...))
}

// want checks that c has n positional arguments.
func (c command) want(n int) error {
	if len(c.args) != n {
		return c.errorf("want %d arguments, got %d", n, len(c.args))
	}
	return nil
}

// duration parses s, a duration the command was given.
func (c command) duration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, c.errorf("%q is not a duration", s)
	}
	return d, nil
}

// key is the private key of the option priv.
func (c command) key() (keys.Private, error) { return c.keyOpt("priv") }

// keyOpt is the private key whose seed is the option opt.
func (c command) keyOpt(opt string) (keys.Private, error) {
	n, err := strconv.Atoi(c.opts[opt])
	if err != nil || n <= 0 || n > 255 {
		return keys.Private{}, c.errorf("%s=%q is not a seed 1..255", opt, c.opts[opt])
	}
	return KeyOf(byte(n)), nil
}

// KeyOf is the private key of seed n.
func KeyOf(n byte) keys.Private {
	var k keys.Private
	for i := range k {
		k[i] = n + byte(i)
	}
	k[0] &= 248
	k[31] = (k[31] & 127) | 64
	return k
}
