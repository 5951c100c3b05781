package connection

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
)

// ParseLocalAddresses reads the local_address option: one IP, a
// comma-separated list, or a range such as 127.0.0.2-127.0.0.9 (IPv4, the
// last byte varies). Several source addresses multiply the ephemeral ports
// a host has for one broker address (about 28,000 each with Linux's
// default ip_local_port_range; bindNoPort keeps them per broker address).
func ParseLocalAddresses(s string) ([]net.IP, error) {
	var out []net.IP
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		from, to, isRange := strings.Cut(part, "-")
		a := net.ParseIP(strings.TrimSpace(from))
		if a == nil {
			return nil, fmt.Errorf("%q is not an IP address (expected e.g. 127.0.0.2, 10.0.0.5,10.0.0.6 or 127.0.0.2-127.0.0.9)", from)
		}
		if !isRange {
			out = append(out, a)
			continue
		}
		b := net.ParseIP(strings.TrimSpace(to)).To4()
		a4 := a.To4()
		if a4 == nil || b == nil || !a4.Mask(net.CIDRMask(24, 32)).Equal(b.Mask(net.CIDRMask(24, 32))) || b[3] < a4[3] {
			return nil, fmt.Errorf("%q is not a range of IPv4 addresses that differ in the last byte only, first <= last", part)
		}
		for i := int(a4[3]); i <= int(b[3]); i++ {
			out = append(out, net.IPv4(a4[0], a4[1], a4[2], byte(i)))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no address given")
	}
	// An address this host does not have fails every connection's bind
	// ("cannot assign requested address"), which would read as a broker
	// that cannot be reached: refuse it here, before any connection.
	for _, ip := range out {
		l, err := net.ListenPacket("udp", net.JoinHostPort(ip.String(), "0"))
		if err != nil {
			return nil, fmt.Errorf("%s is not an address of this host (binding to it fails: %v): give addresses of this "+
				"generator's interfaces (ip -brief addr), or 127.0.0.x for a broker on loopback", ip, err)
		}
		_ = l.Close()
	}
	return out, nil
}

// LocalDialer dials from the given source addresses in turn, one
// connection after another, with the kernel picking the port. It replaces
// the VU's dialer for the connections that have it, so k6's own dialer
// options (blockHostnames, hosts) do not apply to them.
func LocalDialer(ips []net.IP) func(ctx context.Context, network, addr string) (net.Conn, error) {
	dialers := make([]net.Dialer, len(ips))
	for i, ip := range ips {
		dialers[i].LocalAddr = &net.TCPAddr{IP: ip}
		dialers[i].Control = bindNoPort
	}
	var next atomic.Uint64
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		d := &dialers[(next.Add(1)-1)%uint64(len(dialers))]
		return d.DialContext(ctx, network, addr)
	}
}
