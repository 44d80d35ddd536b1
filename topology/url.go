package topology

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// ParseMasterURL reads a redis:// or rediss:// URL into a master's connection
// fields: redis://[user[:password]@]host[:port][/db]. rediss:// means TLS with the
// system roots. The port defaults to 6379 and the db to 0. The error never
// contains the password.
func ParseMasterURL(raw string) (Master, error) {
	var m Master
	u, err := url.Parse(raw)
	if err != nil {
		return m, errors.New("not a valid URL: want redis://[user[:password]@]host[:port][/db]")
	}
	switch u.Scheme {
	case "redis":
	case "rediss":
		m.TLS = &TLS{}
	default:
		return m, fmt.Errorf("scheme %q: want redis:// or rediss://", u.Scheme)
	}
	if u.Opaque != "" || u.Host == "" {
		return m, errors.New("no host: want redis://[user[:password]@]host[:port][/db]")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return m, errors.New("query and fragment are not supported: write tls settings in a tls block")
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		return m, errors.New("no host")
	}
	if port == "" {
		port = "6379"
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		// Not quoted either: with an unescaped "/" in the password, "host:port"
		// is "user:password-prefix".
		return m, errors.New("the port must be a number in 1..65535 (%-escape / ? # @ in a password)")
	}
	m.Address = net.JoinHostPort(host, port)
	if u.User != nil {
		m.Username = u.User.Username()
		m.Password, _ = u.User.Password()
		if _, hasPW := u.User.Password(); !hasPW {
			// redis://secret@host is the password-only form (AUTH password).
			m.Password, m.Username = m.Username, ""
		}
	}
	if db := strings.Trim(u.Path, "/"); db != "" {
		// The path is not quoted: in "redis://u:12/secret@h" the user forgot to
		// %-escape a "/" in the password, and the path is the rest of it.
		n, err := strconv.Atoi(db)
		if err != nil || n < 0 {
			return m, errors.New("the path after host:port must be a db number >= 0 (%-escape / ? # @ in a password)")
		}
		m.DB = n
	}
	return m, nil
}

// IsURL reports whether an address is written as a URL (it has a scheme).
func IsURL(addr string) bool { return strings.Contains(addr, "://") }
