// Command udpstream is test tooling of the perf/ testbed (not part of the
// relay): a paced UDP stream with sequence numbers, so that a scenario can
// tell exactly which datagrams were lost and when they were sent.
//
//	udpstream send --to ADDR:PORT [--interval 5ms] [--size 64]
//	udpstream recv --listen ADDR:PORT
//
// The sender sends one datagram per interval, carrying its sequence number
// (from 0) and its send time, and logs "seq send_time" per datagram; the
// receiver logs "seq send_time recv_time" per datagram it gets, in arrival
// order. Times are Unix seconds with microseconds; sender and receiver run
// on one machine, so their clocks are the same. Both run until SIGINT or
// SIGTERM and flush their log on the way out (and every second, so that a
// log is readable while the stream runs). A datagram the sender logged and
// the receiver did not is lost.
package main

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"
)

const usage = `usage:
  udpstream send --to ADDR:PORT [--interval 5ms] [--size 64]
  udpstream recv --listen ADDR:PORT`

// header is the payload's prefix: sequence number and send time (Unix ns).
const header = 16

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "send":
		err = send(os.Args[2:])
	case "recv":
		err = recv(os.Args[2:])
	default:
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "udpstream:", err)
		os.Exit(1)
	}
}

// stopped is closed on SIGINT or SIGTERM.
func stopped() <-chan struct{} {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { <-sigs; close(done) }()
	return done
}

func stamp(t time.Time) string { return fmt.Sprintf("%d.%06d", t.Unix(), t.Nanosecond()/1000) }

func send(args []string) error {
	fs := flag.NewFlagSet("send", flag.ExitOnError)
	to := fs.String("to", "", "receiver ADDR:PORT")
	interval := fs.Duration("interval", 5*time.Millisecond, "time between datagrams")
	size := fs.Int("size", 64, "payload bytes (at least 16)")
	_ = fs.Parse(args)
	if *to == "" || *interval <= 0 || *size < header {
		return fmt.Errorf("send needs --to, a positive --interval and --size >= %d", header)
	}
	c, err := net.Dial("udp", *to)
	if err != nil {
		return err
	}
	defer c.Close()
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	done := stopped()
	buf := make([]byte, *size)
	// A ticker drops ticks when the sender runs late, so a starved sender
	// sends fewer datagrams, never a burst; the sequence stays contiguous.
	tick := time.NewTicker(*interval)
	defer tick.Stop()
	flush := time.NewTicker(time.Second)
	defer flush.Stop()
	for seq := uint64(0); ; {
		select {
		case <-done:
			fmt.Fprintf(out, "# sent %d\n", seq)
			return nil
		case <-flush.C:
			out.Flush()
		case <-tick.C:
			now := time.Now()
			binary.BigEndian.PutUint64(buf[0:], seq)
			binary.BigEndian.PutUint64(buf[8:], uint64(now.UnixNano()))
			// A send error (no route while a relay restarts) loses the
			// datagram like the network would: it is logged as sent.
			_, _ = c.Write(buf)
			fmt.Fprintf(out, "%d %s\n", seq, stamp(now))
			seq++
		}
	}
}

func recv(args []string) error {
	fs := flag.NewFlagSet("recv", flag.ExitOnError)
	listen := fs.String("listen", "", "ADDR:PORT to listen on")
	_ = fs.Parse(args)
	if *listen == "" {
		return fmt.Errorf("recv needs --listen")
	}
	c, err := net.ListenPacket("udp", *listen)
	if err != nil {
		return err
	}
	out := bufio.NewWriter(os.Stdout)
	lines := make(chan string, 1024)
	go func() {
		buf := make([]byte, 65536)
		for {
			n, _, err := c.ReadFrom(buf)
			if err != nil {
				close(lines)
				return
			}
			now := time.Now()
			if n < header {
				continue
			}
			seq := binary.BigEndian.Uint64(buf[0:])
			sent := time.Unix(0, int64(binary.BigEndian.Uint64(buf[8:])))
			lines <- fmt.Sprintf("%d %s %s\n", seq, stamp(sent), stamp(now))
		}
	}()
	done := stopped()
	flush := time.NewTicker(time.Second)
	defer flush.Stop()
	for {
		select {
		case <-done:
			c.Close()
			for l := range lines {
				out.WriteString(l)
			}
			return out.Flush()
		case <-flush.C:
			out.Flush()
		case l, ok := <-lines:
			if !ok {
				return out.Flush()
			}
			out.WriteString(l)
		}
	}
}
