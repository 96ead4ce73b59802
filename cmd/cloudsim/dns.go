package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"

	"github.com/miekg/dns"
)

// A hostResolver is a simulator whose cloud hands out DNS names (a cloud
// IP's fqdn, a server's, a CNS name) that clients resolve: Brightbox's
// cloud-controller-manager looks up a cloud IP's name before it builds a
// load balancer on it. LookupHost returns the addresses name resolves to,
// nil for a name the simulator never handed out.
type hostResolver interface {
	LookupHost(name string) []netip.Addr
}

// dnsTTL is the TTL of every answer: the simulated cloud changes under
// its clients, so they should not keep an answer long.
const dnsTTL = 5

// dnsHandler answers A and AAAA queries from a hostResolver: a name the
// simulator handed out gets its addresses of the asked family (none, with
// NOERROR, when it has only the other family); any other name NXDOMAIN.
// The server is authoritative for those names and recurses for nobody.
type dnsHandler struct{ sim hostResolver }

func (h dnsHandler) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	if req.Opcode != dns.OpcodeQuery || len(req.Question) != 1 {
		m.SetRcode(req, dns.RcodeNotImplemented)
		_ = w.WriteMsg(m)
		return
	}
	q := req.Question[0]
	addrs := h.sim.LookupHost(strings.TrimSuffix(q.Name, "."))
	if addrs == nil {
		m.SetRcode(req, dns.RcodeNameError)
		_ = w.WriteMsg(m)
		return
	}
	hdr := dns.RR_Header{Name: q.Name, Class: dns.ClassINET, Ttl: dnsTTL}
	for _, a := range addrs {
		switch {
		case q.Qtype == dns.TypeA && a.Is4():
			hdr.Rrtype = dns.TypeA
			m.Answer = append(m.Answer, &dns.A{Hdr: hdr, A: net.IP(a.AsSlice())})
		case q.Qtype == dns.TypeAAAA && a.Is6() && !a.Is4In6():
			hdr.Rrtype = dns.TypeAAAA
			m.Answer = append(m.Answer, &dns.AAAA{Hdr: hdr, AAAA: net.IP(a.AsSlice())})
		}
	}
	_ = w.WriteMsg(m)
}

// serveDNS serves the simulator's names on addr (a loopback address, UDP
// and TCP, the same port for both: port 0 picks one) until stop. It
// returns the address it listens on, and failed, which yields when a
// server ends before stop.
func serveDNS(addr string, sim hostResolver, stderr io.Writer) (bound string, failed <-chan error, stop func(), err error) {
	if err := checkLoopback(addr); err != nil {
		return "", nil, nil, fmt.Errorf("--dns: %w", err)
	}
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return "", nil, nil, fmt.Errorf("--dns: %w", err)
	}
	// A truncated answer is asked again over TCP on the same port.
	ln, err := net.Listen("tcp", pc.LocalAddr().String())
	if err != nil {
		_ = pc.Close()
		return "", nil, nil, fmt.Errorf("--dns: %w", err)
	}
	h := dnsHandler{sim}
	servers := []*dns.Server{{PacketConn: pc, Handler: h}, {Listener: ln, Handler: h}}
	ended := make(chan error, len(servers)) // nobody reads it after stop
	for _, srv := range servers {
		go func() {
			err := srv.ActivateAndServe()
			if err == nil {
				err = errors.New("stopped")
			}
			ended <- fmt.Errorf("DNS on %s ended: %w", addr, err)
		}()
	}
	stop = func() {
		for _, srv := range servers {
			_ = srv.Shutdown()
		}
	}
	fmt.Fprintf(stderr, "answering the simulated cloud's DNS names on %s (udp and tcp)\n", pc.LocalAddr())
	return pc.LocalAddr().String(), ended, stop, nil
}
