//go:build unix

package redistest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// TLSServerName is the DNS name in every generated server certificate (along with
// the IP address 127.0.0.1).
const TLSServerName = "localhost"

// TLSFiles are the PEM files of a TLS server started by this package: a CA made
// for the test, and a server certificate it signed for 127.0.0.1 and "localhost".
// The files live outside the server's data directory, so Restart keeps them.
type TLSFiles struct {
	// CAFile is the CA certificate clients must trust.
	CAFile string
	// CertFile and KeyFile are the server's certificate and private key.
	CertFile string
	KeyFile  string
	// ServerName is the name the server certificate is valid for.
	ServerName string
}

// ClientConfig returns a client TLS configuration that trusts the CA and expects
// ServerName, or an error when the CA file cannot be read.
func (f *TLSFiles) ClientConfig() (*tls.Config, error) {
	b, err := os.ReadFile(f.CAFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("redistest: no certificate in %s", f.CAFile)
	}
	return &tls.Config{RootCAs: pool, ServerName: f.ServerName, MinVersion: tls.VersionTLS12}, nil
}

// NewTLSFiles generates a CA and a server certificate for 127.0.0.1 and
// "localhost" into dir (ca.pem, server.pem, server-key.pem). Certificates are
// valid from an hour ago for a day.
func NewTLSFiles(dir string) (*TLSFiles, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "redistest CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	srvTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: TLSServerName},
		DNSNames:     []string{TLSServerName},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		return nil, err
	}
	f := &TLSFiles{
		CAFile:     filepath.Join(dir, "ca.pem"),
		CertFile:   filepath.Join(dir, "server.pem"),
		KeyFile:    filepath.Join(dir, "server-key.pem"),
		ServerName: TLSServerName,
	}
	for _, w := range []struct {
		path, typ string
		der       []byte
	}{
		{f.CAFile, "CERTIFICATE", caDER},
		{f.CertFile, "CERTIFICATE", srvDER},
		{f.KeyFile, "EC PRIVATE KEY", keyDER},
	} {
		if err := os.WriteFile(w.path, pem.EncodeToMemory(&pem.Block{Type: w.typ, Bytes: w.der}), 0o600); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// tlsArgs are the redis-server arguments of a TLS-only server on port.
func (f *TLSFiles) tlsArgs(port string) []string {
	return []string{
		"--port", "0", "--tls-port", port,
		"--tls-cert-file", f.CertFile, "--tls-key-file", f.KeyFile, "--tls-ca-cert-file", f.CAFile,
		"--tls-auth-clients", "no",
	}
}
