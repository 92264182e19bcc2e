package dnsserver

import (
	"net"

	"github.com/miekg/dns"
)

// fakeWriter is a dns.ResponseWriter that keeps what is written.
type fakeWriter struct {
	remote net.Addr
	msgs   []*dns.Msg
}

var _ dns.ResponseWriter = (*fakeWriter)(nil)

func udpFrom(ip string) *fakeWriter {
	return &fakeWriter{remote: &net.UDPAddr{IP: net.ParseIP(ip), Port: 5353}}
}

func tcpFrom(ip string) *fakeWriter {
	return &fakeWriter{remote: &net.TCPAddr{IP: net.ParseIP(ip), Port: 5353}}
}

func (w *fakeWriter) LocalAddr() net.Addr       { return &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 53} }
func (w *fakeWriter) RemoteAddr() net.Addr      { return w.remote }
func (w *fakeWriter) WriteMsg(m *dns.Msg) error { w.msgs = append(w.msgs, m); return nil }
func (w *fakeWriter) Write(b []byte) (int, error) {
	m := new(dns.Msg)
	if err := m.Unpack(b); err != nil {
		return 0, err
	}
	return len(b), w.WriteMsg(m)
}
func (w *fakeWriter) Close() error        { return nil }
func (w *fakeWriter) TsigStatus() error   { return nil }
func (w *fakeWriter) TsigTimersOnly(bool) {}
func (w *fakeWriter) Hijack()             {}
