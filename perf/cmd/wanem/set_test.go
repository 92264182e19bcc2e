package main

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/liqo-relay/relay/perf/wanem"
)

func TestSetChangesOnlyWhatIsGiven(t *testing.T) {
	cur := wanem.Settings{Delay: wanem.Duration(10 * time.Millisecond), Loss: 0.1, Cut: true}
	sock, ch, err := parseSet([]string{"--control", "/tmp/x.sock", "--dir", "ab", "--jitter", "2ms", "--restore"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if sock != "/tmp/x.sock" || len(ch.dirs) != 1 || ch.dirs[0] != "ab" {
		t.Fatalf("socket %q, directions %v: want /tmp/x.sock and [ab]", sock, ch.dirs)
	}
	got := ch.apply(cur)
	want := wanem.Settings{Delay: wanem.Duration(10 * time.Millisecond), Jitter: wanem.Duration(2 * time.Millisecond), Loss: 0.1}
	if got != want {
		t.Errorf("got %+v, want %+v (delay and loss kept, jitter set, cut undone)", got, want)
	}
	_, ch, err = parseSet([]string{"--control", "/tmp/x.sock", "--reset", "--loss", "0.5"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := ch.apply(cur); got != (wanem.Settings{Loss: 0.5}) || len(ch.dirs) != 2 {
		t.Errorf("--reset --loss 0.5: got %+v on %v, want only the loss, both directions", got, ch.dirs)
	}
}

func TestSetRefusesContradictions(t *testing.T) {
	for _, args := range [][]string{
		{"--control", "/tmp/x.sock", "--cut", "--restore"},
		{"--control", "/tmp/x.sock", "--dir", "up"},
		{"--control", "/tmp/x.sock", "--burst", "0.5"},
		{"--delay", "1ms"},
	} {
		if _, _, err := parseSet(args, io.Discard); !errors.Is(err, errUsage) {
			t.Errorf("%v: got %v, want a usage error", args, err)
		}
	}
}
