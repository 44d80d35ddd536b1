// Package connect turns a declared topology into connections: go-redis options for
// administrative traffic (probes, listings, CONFIG SET) and a quorum.Manager for lock
// traffic, with the same TLS and credentials. Errors name the master, never its password.
package connect

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock/redlock/quorum"
	"github.com/redlock/redlock/topology"
)

// TLSConfig builds the TLS configuration of a master; nil when it has none.
func TLSConfig(m *topology.Master) (*tls.Config, error) {
	if m.TLS == nil {
		return nil, nil
	}
	cfg := &tls.Config{ServerName: m.TLS.ServerName, InsecureSkipVerify: m.TLS.InsecureSkipVerify, MinVersion: tls.VersionTLS12}
	if m.TLS.CAFile != "" {
		pem, err := os.ReadFile(m.TLS.CAFile)
		if err != nil {
			return nil, fmt.Errorf("master %s: tls ca_file: %w", m.Name, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("master %s: tls ca_file %s: no PEM certificate in it", m.Name, m.TLS.CAFile)
		}
		cfg.RootCAs = pool
	}
	if m.TLS.CertFile != "" || m.TLS.KeyFile != "" {
		cert, err := tls.LoadX509KeyPair(m.TLS.CertFile, m.TLS.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("master %s: tls cert_file/key_file: %w", m.Name, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// Options returns go-redis options for administrative traffic to one master: no
// driver retries, context deadlines honoured, dialling bounded by timeout.
func Options(m *topology.Master, timeout time.Duration) (*redis.Options, error) {
	tc, err := TLSConfig(m)
	if err != nil {
		return nil, err
	}
	return &redis.Options{
		Addr:                  m.Address,
		Username:              m.Username,
		Password:              m.Password,
		DB:                    m.DB,
		TLSConfig:             tc,
		Protocol:              2,
		DisableIdentity:       true,
		ContextTimeoutEnabled: true,
		MaxRetries:            -1,
		DialTimeout:           timeout,
		DialerRetries:         1,
		ReadTimeout:           timeout,
		WriteTimeout:          timeout,
		PoolSize:              4,
	}, nil
}

// Clients returns one administrative client per master, in declared order.
func Clients(c *topology.Cluster, timeout time.Duration) ([]*redis.Client, error) {
	out := make([]*redis.Client, 0, len(c.Masters))
	for i := range c.Masters {
		opt, err := Options(&c.Masters[i], timeout)
		if err != nil {
			for _, cl := range out {
				_ = cl.Close()
			}
			return nil, err
		}
		out = append(out, redis.NewClient(opt))
	}
	return out, nil
}

// Nodes returns the quorum nodes of the cluster, in declared order.
func Nodes(c *topology.Cluster) ([]quorum.Node, error) {
	out := make([]quorum.Node, 0, len(c.Masters))
	for i := range c.Masters {
		m := &c.Masters[i]
		tc, err := TLSConfig(m)
		if err != nil {
			return nil, err
		}
		out = append(out, quorum.Node{Name: m.Name, Addr: m.Address, Username: m.Username, Password: m.Password, DB: m.DB, TLS: tc})
	}
	return out, nil
}

// ManagerOptions returns the quorum options that the cluster declares.
func ManagerOptions(c *topology.Cluster) []quorum.Option {
	opts := []quorum.Option{
		quorum.WithKeyPrefix(c.KeyPrefix),
		quorum.WithNodeTimeout(c.NodeTimeout),
		quorum.WithDrift(c.Drift.Factor, c.Drift.Extra),
		quorum.WithMaxTTL(c.MaxTTL),
		quorum.WithRetry(c.Retry.Attempts, c.Retry.Delay, c.Retry.Jitter),
	}
	if !c.RestartQuarantine {
		opts = append(opts, quorum.WithRestartQuarantine(0))
	}
	return opts
}

// Manager returns a quorum.Manager for the cluster; extra options apply last.
func Manager(c *topology.Cluster, extra ...quorum.Option) (*quorum.Manager, error) {
	nodes, err := Nodes(c)
	if err != nil {
		return nil, err
	}
	return quorum.New(nodes, append(ManagerOptions(c), extra...)...)
}
